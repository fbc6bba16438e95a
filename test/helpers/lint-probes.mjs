// Lints source texts under given paths with the repository's ESLint configuration (eslint.config.mjs), without writing
// them: reads `[{ filePath, text }]` as JSON on stdin and prints, for each, the rule ids it breaks. A child process of
// test/unit/lint-gates.test.ts (ESLint's flat configuration is an ES module, which jest's CommonJS runtime cannot load).
import { ESLint } from 'eslint';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const probes = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const eslint = new ESLint({ cwd: process.cwd() });
const out = [];
for (const { filePath, text } of probes) {
  const [result] = await eslint.lintText(text, { filePath });
  out.push((result?.messages ?? []).map((m) => m.ruleId ?? m.message));
}
process.stdout.write(JSON.stringify(out));
