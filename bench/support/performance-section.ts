import { readFile, writeFile } from 'node:fs/promises';

/**
 * Writes `section` (which starts with its own `## heading` line) into
 * docs/performance.md: in place of the section under the same heading, up to
 * the next `## `, or appended when there is none. Other sections are kept.
 */
export async function writePerformanceSection(section: string): Promise<void> {
  const heading = section.slice(0, section.indexOf('\n'));
  const path = new URL('../../docs/performance.md', import.meta.url);
  let doc = await readFile(path, 'utf8').catch(() => '# Performance\n');
  const start = doc.split('\n').findIndex((line) => line === heading);
  if (start === -1) {
    doc = `${doc.trimEnd()}\n\n${section}`;
  } else {
    const lines = doc.split('\n');
    const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
    const after = end === -1 ? '' : `\n${lines.slice(end).join('\n')}`;
    doc = `${lines.slice(0, start).join('\n')}\n${section}${after}`;
  }
  await writeFile(path, doc.endsWith('\n') ? doc : `${doc}\n`);
  console.error(`wrote docs/performance.md ("${heading}")`);
}
