import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

/**
 * Writes the document formatted as the repository's Prettier settings want it
 * (its tables aligned), so a bench run's figures pass `npm run lint` as written.
 */
async function writeFormatted(path: URL, text: string): Promise<void> {
  const filepath = fileURLToPath(path);
  const options = (await prettier.resolveConfig(filepath)) ?? {};
  await writeFile(path, await prettier.format(text, { ...options, filepath }));
}

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
  await writeFormatted(path, doc);
  console.error(`wrote docs/performance.md ("${heading}")`);
}

/**
 * Writes `subsection` (which starts with its own `### heading` line) into the
 * section under `parent` (a `## heading` line) of docs/performance.md: in place
 * of the subsection under the same heading, up to the next `### ` or `## `,
 * or at the end of the parent section when there is none (the parent is
 * appended when missing). Everything else is kept.
 */
export async function writePerformanceSubsection(parent: string, subsection: string): Promise<void> {
  const heading = subsection.slice(0, subsection.indexOf('\n'));
  const path = new URL('../../docs/performance.md', import.meta.url);
  const doc = await readFile(path, 'utf8').catch(() => '# Performance\n');
  const lines = doc.split('\n');
  const own = subsection.trimEnd().split('\n');
  let start = lines.findIndex((line) => line === parent);
  if (start === -1) {
    lines.push('', parent, '');
    start = lines.length - 2;
  }
  const sectionEnd = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  const end = sectionEnd === -1 ? lines.length : sectionEnd;
  const at = lines.findIndex((line, i) => i > start && i < end && line === heading);
  if (at === -1) {
    // Before the blank lines that end the parent section.
    let insert = end;
    while (insert > start + 1 && lines[insert - 1] === '') insert -= 1;
    lines.splice(insert, 0, '', ...own);
  } else {
    const next = lines.findIndex((line, i) => i > at && (line.startsWith('### ') || line.startsWith('## ')));
    let stop = next === -1 ? lines.length : next;
    while (stop > at + 1 && lines[stop - 1] === '') stop -= 1;
    lines.splice(at, stop - at, ...own);
  }
  const text = lines.join('\n');
  await writeFormatted(path, text);
  console.error(`wrote docs/performance.md ("${parent}" / "${heading}")`);
}
