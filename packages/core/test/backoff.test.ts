import { describe, expect, it } from 'vitest';
import { Backoff } from '../src/backoff.js';
import { CondensedWarning } from '../src/condensed-warning.js';
import type { Logger } from '../src/logger.js';

describe('Backoff', () => {
  it('doubles from 250 ms to a 30 s cap', () => {
    const backoff = new Backoff({ random: () => 0 });
    const delays = Array.from({ length: 12 }, () => backoff.next());
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000, 30000]);
    expect(backoff.failures).toBe(12);
    backoff.reset();
    expect(backoff.next()).toBe(250);
  });

  it('jitters each delay down by at most a fifth and never past the cap', () => {
    const backoff = new Backoff({ random: () => 0.999 });
    const delays = Array.from({ length: 40 }, () => backoff.next());
    expect(delays[0]).toBe(200);
    expect(Math.max(...delays)).toBeLessThanOrEqual(30_000);
    expect(Math.min(...delays.slice(8))).toBeGreaterThanOrEqual(24_000);
    const random = new Backoff();
    for (let i = 0; i < 1_000; i++) expect(random.next()).toBeLessThanOrEqual(30_000);
  });
});

describe('CondensedWarning', () => {
  it('logs attempts 1, 2, 4, 8, ... and a recovery line', () => {
    const lines: Array<{ level: string; fields: object; msg?: string }> = [];
    const logger: Logger = {
      debug: () => {},
      info: (fields, msg) => lines.push({ level: 'info', fields, msg }),
      warn: (fields, msg) => lines.push({ level: 'warn', fields, msg }),
      error: () => {},
      child: () => logger,
    };
    const warning = new CondensedWarning(logger, 'backend unreachable; retrying');
    for (let i = 0; i < 1_000; i++) warning.failed({ err: { message: 'ECONNREFUSED' } }, 30_000);
    expect(lines.map((l) => (l.fields as { attempt: number }).attempt)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
    ]);
    expect(lines[0]).toEqual({
      level: 'warn',
      fields: { err: { message: 'ECONNREFUSED' }, attempt: 1, retryInMs: 30_000 },
      msg: 'backend unreachable; retrying',
    });
    lines.length = 0;
    warning.recovered();
    warning.recovered();
    expect(lines).toEqual([
      { level: 'info', fields: { attempts: 1_000 }, msg: 'backend unreachable; retrying: recovered' },
    ]);
  });
});
