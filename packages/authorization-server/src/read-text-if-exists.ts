import { readFile } from 'node:fs/promises';

/** A file's UTF-8 text, or undefined when there is no such file; any other failure throws. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
