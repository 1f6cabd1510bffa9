// Writes pieces.json, the cases of TestPiecesMatchRegexp: random strings and
// the pieces JavaScript's regular-expression engine (which has lookahead)
// cuts them into with GPT-2's pattern, as the npm package gpt-3-encoder
// does. Run once with Node.js: node data/bpe/testdata/pieces.js
//
// U+0085 (NEL) is left out of the alphabet: it is White_Space in Unicode,
// in Python's regex module and in tiktoken, but not \s in JavaScript.
const fs = require('fs');
const path = require('path');
const pat = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const alphabet = [' ', ' ', ' ', '\n', '\n', '\t', '\r', '\v', '\f', 'a', 'b', 'Z', 'é', '中', '1', '9', '½', '٣',
  "'", "'s", "'ll", "'t", "'re", "'S", '.', ',', '!', '-', '\u3000', '\u00a0', '\u2028', '😀', 'x'];
let state = 12345;
function next(n) { // a 31-bit LCG: deterministic on every Node.js
  state = (state * 1103515245 + 12345) % 2147483648;
  return state % n;
}
const cases = [];
for (let i = 0; i < 2000; i++) {
  let s = '';
  for (let k = next(14); k > 0; k--) s += alphabet[next(alphabet.length)];
  cases.push({ text: s, pieces: Array.from(s.matchAll(pat), m => m[0]) });
}
fs.writeFileSync(path.join(__dirname, 'pieces.json'), JSON.stringify(cases) + '\n');
