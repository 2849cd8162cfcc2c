// Every relative import of the repository's JavaScript and TypeScript names a file that exists
// (Biome does not resolve paths; a moved file would otherwise fail only when its suite runs).
// A .js specifier in a .ts file names the .ts source, as TypeScript's NodeNext resolution does.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.mjs', '*.js', '*.ts', '*.mts'], { encoding: 'utf8' })
  .split('\n').filter((f) => f && !/(^|\/)(node_modules|dist)\//.test(f) && existsSync(f));
const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.\.?\/[^'"]+)['"]/gm;
const problems = [];
for (const file of files) {
  for (const [, spec] of readFileSync(file, 'utf8').matchAll(specifier)) {
    const target = resolve(dirname(file), spec);
    const candidates = file.endsWith('ts') ? [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')] : [target];
    if (!candidates.some((c) => existsSync(c))) problems.push(`${file}: ${spec} does not exist`);
  }
}
for (const p of problems) console.error(`relative-imports: ${p}`);
console.log(`relative-imports: ${files.length} files, ${problems.length} problems`);
process.exit(problems.length ? 1 : 0);
