import fs from 'node:fs';
import path from 'node:path';

/** The project is Apache-2.0: the full licence text at the root, and the same SPDX id where npm and tools read it. */
const ROOT = path.resolve(__dirname, '../..');

test('LICENSE holds the full Apache License 2.0 text', () => {
  const text = fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
  expect(text).toMatch(/Apache License\s+Version 2\.0, January 2004/);
  expect(text).toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION');
  expect(text).toContain('END OF TERMS AND CONDITIONS');
  expect(text).toContain('APPENDIX: How to apply the Apache License to your work.');
});

test('package.json and its lock name the same licence', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { license: string };
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { license?: string }>;
  };
  expect(pkg.license).toBe('Apache-2.0');
  expect(lock.packages['']!.license).toBe('Apache-2.0');
});
