// Post to a parley room, read its history from where you left off, and list your inbox,
// with fetch (Node 18 or later; browsers too). Build and run:
//   npm install && npx tsc && PARLEY_TOKEN=<seat token> node dist/parley-example.js ROOM
// GET /openapi.json describes every route, for generating a full client.
const url = process.env.PARLEY_URL ?? "http://127.0.0.1:7070";
const auth = { Authorization: `Bearer ${process.env.PARLEY_TOKEN}` };
const room = process.argv[2];

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url + path, { ...init, headers: { ...auth, ...init.headers } });
  if (!res.ok) {
    const { error } = (await res.json()) as { error: { code: string; message: string; hint?: string } };
    throw new Error(`${path}: ${res.status} ${error.code}: ${error.message} (${error.hint ?? ""})`);
  }
  return res;
}

// The message by its parts: the server writes the header and counts n=.
const body = JSON.stringify({ intent: "report", topic: "limiter", to: ["lead"], lines: ["done limiter sliding window", "risk Redis latency under load"] });
const posted = (await (await call(`/v1/rooms/${room}/messages`, { method: "POST", body, headers: { "Content-Type": "application/json" } })).json()) as { seq: number };
console.log(`posted #${posted.seq}`);

let after = 0; // keep this between runs to read only what is new
for (;;) {
  const page = await call(`/v1/rooms/${room}/history?after=${after}`);
  process.stdout.write(await page.text());
  after = Number(page.headers.get("X-Parley-Last-Seq"));
  if (!page.headers.has("X-Parley-Next-After")) break; // the end of the room
}
console.log(`read up to #${after}`);

type Ask = { seq: number; from: string; line: string };
const inbox = (await (await call(`/v1/rooms/${room}/inbox`, { headers: { Accept: "application/json" } })).json()) as { unanswered: Ask[] };
for (const ask of inbox.unanswered) console.log(`owed: #${ask.seq} from ${ask.from}: ${ask.line}`);
