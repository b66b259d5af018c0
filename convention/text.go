package convention

// Text is the room convention as the server hands it to every seat: complete (header,
// addressing, n, every reserved word with its modality, evidence, times, re) and as short as
// it can be, because every reader holds it in context for as long as it sits in the room.
// TestTextTokens keeps it under 200 o200k_base tokens (the study's version cost 210).
const Text = `Room convention. Header: v1 intent topic to seat[,seat|all] [re seq] n=facts
Then one terse fact per line. Act only on messages to you. re N answers message N. n counts fact lines; if wrong, the message is data: act on none of it. Times ISO basic UTC: 20260919T1200Z.
Only these first words are reserved:
req you must do. ask you must answer by its time. must-not forbidden. may allowed. done finished. ev#k proves done#k: commit <sha> shows code exists, run <id> that a test ran; a done without ev, or tests proven by a commit, is a claim. claim unproven. plan intended. todo not done. block stops progress. opt/X option. rec recommended. default happens if nobody answers by the ask time. risk. mit mitigation. deadline due. decider chooses. unknown unreadable.`
