package convention

// Text is the room convention as the server hands it to every seat.
const Text = `TODO`
