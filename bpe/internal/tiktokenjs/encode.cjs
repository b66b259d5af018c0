// encode.cjs reads JSON lines {"text": "..."} on stdin and writes, for each, one line per
// encoding {"encoding","text","ids"} with the ids of OpenAI tiktoken (npm tiktoken, the WASM
// build of tiktoken's Rust core) under encode_ordinary. Used to make bpe/testdata/tiktoken.jsonl
// and by TestAgainstTiktokenJS; needs `npm install tiktoken@1.0.22` in NODE_PATH or here.
const { get_encoding } = require("tiktoken");
const readline = require("readline");
const encs = ["o200k_base", "cl100k_base"].map((n) => [n, get_encoding(n)]);
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
rl.on("line", (line) => {
  if (!line) return;
  const { text } = JSON.parse(line);
  for (const [name, enc] of encs) {
    out.push(JSON.stringify({ encoding: name, text, ids: Array.from(enc.encode_ordinary(text)) }));
  }
  if (out.length >= 1000) { process.stdout.write(out.join("\n") + "\n"); out.length = 0; }
});
rl.on("close", () => { if (out.length) process.stdout.write(out.join("\n") + "\n"); });
