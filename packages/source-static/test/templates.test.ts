import { describe, expect, it } from 'vitest';
import { matchUriTemplate, parseUriTemplate, type ParsedUriTemplate } from '../src/uri-template.js';
import { createSource } from './helpers.js';

function parse(template: string): ParsedUriTemplate {
  const parsed = parseUriTemplate(template);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

function textOf(contents: Awaited<ReturnType<Awaited<ReturnType<typeof createSource>>['read']>>): string {
  const entry = contents?.[0];
  if (entry === undefined || !('text' in entry)) throw new Error('expected one text entry');
  return entry.text;
}

describe('matching a URI against a template', () => {
  it('captures each variable up to the next literal', () => {
    const t = parse('test://users/{user}/files/{file}.json');
    expect(matchUriTemplate(t, 'test://users/ann/files/report.json')).toEqual({ user: 'ann', file: 'report' });
    // The last literal is anchored at the end, so a value may contain it.
    expect(matchUriTemplate(t, 'test://users/ann/files/a.json.json')).toEqual({ user: 'ann', file: 'a.json' });
  });

  it('percent-decodes values (spaces, unicode, an encoded slash)', () => {
    const t = parse('test://items/{id}');
    expect(matchUriTemplate(t, 'test://items/a%20b')).toEqual({ id: 'a b' });
    expect(matchUriTemplate(t, 'test://items/%C3%BCber')).toEqual({ id: 'über' });
    expect(matchUriTemplate(t, 'test://items/a%2Fb')).toEqual({ id: 'a/b' });
  });

  it.each([
    ['an empty value', 'test://items/'],
    ['a slash', 'test://items/a/b'],
    ['a query', 'test://items/a?b'],
    ['a fragment', 'test://items/a#b'],
    ['a bad percent-encoding', 'test://items/%E0%A4%A'],
    ['invalid UTF-8', 'test://items/%FF'],
    ['an encoded NUL', 'test://items/a%00'],
    ['an encoded control character', 'test://items/a%0Ab'],
    ['a raw control character', 'test://items/a\u0001b'],
    ['another prefix', 'test://item/a'],
  ])('does not match %s', (_why, uri) => {
    expect(matchUriTemplate(parse('test://items/{id}'), uri)).toBeUndefined();
  });

  it('matches a template without variables only exactly', () => {
    const t = parse('test://fixed');
    expect(matchUriTemplate(t, 'test://fixed')).toEqual({});
    expect(matchUriTemplate(t, 'test://fixed/')).toBeUndefined();
  });

  it('stays fast on input built to make a backtracking matcher explode', () => {
    const t = parse('test://{a}x{b}x{c}x{d}!');
    const uri = `test://${'x'.repeat(200_000)}`;
    const started = performance.now();
    expect(matchUriTemplate(t, uri)).toBeUndefined();
    // A backtracking regex needs on the order of n^4 steps here (hours).
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('reading a templated URI', () => {
  const template = {
    uriTemplate: 'test://users/{user}/profile',
    name: 'profile',
    mimeType: 'application/json',
    text: '{"user":"{{user}}","greeting":"Hello, {{ user }}"}',
  };

  it('renders the text with the decoded values', async () => {
    const source = await createSource({ templates: [template] });
    const contents = await source.read('test://users/ann%20lee/profile');
    expect(contents).toEqual([
      {
        uri: 'test://users/ann%20lee/profile',
        mimeType: 'application/json',
        text: '{"user":"ann lee","greeting":"Hello, ann lee"}',
      },
    ]);
  });

  it('JSON-escapes values so a value cannot break out of its string', async () => {
    const source = await createSource({ templates: [template] });
    const attack = '","admin":true,"x":"\\';
    const uri = `test://users/${encodeURIComponent(attack)}/profile`;
    const parsed = JSON.parse(textOf(await source.read(uri))) as Record<string, unknown>;
    expect(parsed).toEqual({ user: attack, greeting: `Hello, ${attack}` });
    expect(parsed).not.toHaveProperty('admin');
  });

  it('JSON-escapes for +json media types with parameters too', async () => {
    const source = await createSource({
      templates: [{ ...template, mimeType: 'application/vnd.acme+json; charset=utf-8' }],
    });
    const text = textOf(await source.read(`test://users/${encodeURIComponent('a"b')}/profile`));
    expect(JSON.parse(text)).toMatchObject({ user: 'a"b' });
  });

  it('substitutes verbatim for other media types, keeping $ patterns literal', async () => {
    const source = await createSource({
      templates: [
        { uriTemplate: 'test://notes/{topic}', name: 'note', mimeType: 'text/plain', text: 'About {{topic}}.' },
      ],
    });
    const text = textOf(await source.read(`test://notes/${encodeURIComponent('"$&$1 <b>')}`));
    expect(text).toBe('About "$&$1 <b>.');
  });

  it('prefers a declared resource over a template that matches its URI', async () => {
    const source = await createSource({
      resources: [{ uri: 'test://users/root/profile', name: 'root', text: 'declared' }],
      templates: [template],
    });
    expect(textOf(await source.read('test://users/root/profile'))).toBe('declared');
  });

  it('reports a URI whose value fails to decode as not found', async () => {
    const source = await createSource({ templates: [template] });
    expect(source.owns('test://users/%ZZ/profile')).toBe(false);
    expect(await source.read('test://users/%ZZ/profile')).toBeUndefined();
    expect(await source.read('test://users/%00/profile')).toBeUndefined();
  });
});
