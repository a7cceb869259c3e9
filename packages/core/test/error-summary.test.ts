import { describe, expect, it } from 'vitest';
import { errorSummary } from '../src/error-summary.js';

describe('errorSummary', () => {
  it('keeps name, message and a string code, and nothing else', () => {
    const error = Object.assign(new TypeError('connect failed'), { code: 'ECONNREFUSED', query: 'SELECT secret' });
    expect(errorSummary(error)).toEqual({ name: 'TypeError', message: 'connect failed', code: 'ECONNREFUSED' });
  });

  it('leaves out a code that is not a string', () => {
    expect(errorSummary(Object.assign(new Error('x'), { code: 42 }))).toEqual({ name: 'Error', message: 'x' });
  });

  it('describes a thrown non-error', () => {
    expect(errorSummary('plain string')).toEqual({ name: 'Error', message: 'plain string' });
    expect(errorSummary(undefined)).toEqual({ name: 'Error', message: 'undefined' });
  });
});
