/** One Dockerfile instruction, continuation lines joined. */
export interface DockerInstruction {
  /** Upper-case keyword: FROM, RUN, COPY, ... */
  keyword: string;
  /** Everything after the keyword, continuations joined with a space. */
  args: string;
  /** 1-based line of the keyword. */
  line: number;
}

/** A build stage: its FROM and the instructions up to the next FROM. */
export interface DockerStage {
  image: string;
  name: string | undefined;
  instructions: DockerInstruction[];
}

/**
 * Splits a Dockerfile into stages of instructions. Enough for assertions about
 * what the file says (the lint checks syntax): comments and parser directives
 * are dropped, `\` continuations are joined.
 */
export function parseDockerfile(text: string): DockerStage[] {
  const instructions: DockerInstruction[] = [];
  let pending: { keyword: string; parts: string[]; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === undefined && (line === '' || line.startsWith('#'))) return;
    if (pending !== undefined && line.startsWith('#')) return;
    const continued = line.endsWith('\\');
    const body = continued ? line.slice(0, -1).trim() : line;
    if (pending === undefined) {
      const [keyword = '', ...rest] = body.split(/\s+/);
      pending = { keyword: keyword.toUpperCase(), parts: [rest.join(' ')], line: index + 1 };
    } else {
      pending.parts.push(body);
    }
    if (!continued) {
      instructions.push({
        keyword: pending.keyword,
        args: pending.parts.filter((p) => p !== '').join(' '),
        line: pending.line,
      });
      pending = undefined;
    }
  });

  const stages: DockerStage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}
