import { GatewayError } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { createSource, issuesOf } from './helpers.js';

const many = Array.from({ length: 23 }, (_, i) => ({
  uri: `test://doc/${String(i).padStart(2, '0')}`,
  name: `doc ${i}`,
  text: `document ${i} — ünïcödé`,
}));

describe('listing', () => {
  it('pages through every resource in declaration order, without gaps or duplicates', async () => {
    const source = await createSource({ resources: many });
    const seen: string[] = [];
    let position: string | undefined;
    let pages = 0;
    do {
      const page = await source.listResources(position === undefined ? { limit: 5 } : { limit: 5, position });
      expect(page.items.length).toBeLessThanOrEqual(5);
      seen.push(...page.items.map((r) => r.uri));
      position = page.nextPosition;
      pages += 1;
    } while (position !== undefined && pages < 20);
    expect(pages).toBe(5);
    expect(seen).toEqual(many.map((r) => r.uri));
  });

  it('gives UTF-8 byte sizes, not string lengths', async () => {
    const source = await createSource({ resources: [{ uri: 'test://u', name: 'u', text: 'é€😀' }] });
    const { items } = await source.listResources({ limit: 10 });
    expect(items[0]?.size).toBe(2 + 3 + 4);
  });

  it('keeps a declared size, title, description, annotations and icons', async () => {
    const resource = {
      uri: 'test://r',
      name: 'r',
      title: 'R',
      description: 'A resource',
      mimeType: 'text/plain',
      size: 99,
      annotations: { audience: ['user' as const], priority: 0.5, lastModified: '2025-01-12T15:00:58Z' },
      icons: [{ src: 'https://example.com/i.png', mimeType: 'image/png', sizes: ['48x48'] }],
      text: 'x',
    };
    const source = await createSource({ resources: [resource] });
    const { text: _text, ...descriptor } = resource;
    expect((await source.listResources({ limit: 10 })).items).toEqual([descriptor]);
  });

  it.each(['abc', '-1', '1.5', '01', ' 1', '24', '99999999999999'])(
    'refuses the position %j with MCPGW_CURSOR_INVALID',
    async (position) => {
      const source = await createSource({ resources: many });
      const error = await source.listResources({ limit: 5, position }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('MCPGW_CURSOR_INVALID');
    },
  );

  it('lists nothing for a source with no resources', async () => {
    const source = await createSource({});
    expect(await source.listResources({ limit: 10 })).toEqual({ items: [] });
    expect(await source.listTemplates()).toEqual([]);
  });
});

describe('options', () => {
  it('refuses unknown keys, at every level', async () => {
    expect(await issuesOf({ resource: [] })).toEqual([expect.stringContaining('resource')]);
    expect(await issuesOf({ resources: [{ uri: 'test://a', name: 'a', text: '', mimetype: 'x' }] })).toEqual([
      expect.stringMatching(/^resources\.0: .*mimetype/),
    ]);
    expect(
      await issuesOf({ resources: [{ uri: 'test://a', name: 'a', text: '', annotations: { prio: 1 } }] }),
    ).toHaveLength(1);
  });

  it('requires exactly one of text or blob', async () => {
    expect(await issuesOf({ resources: [{ uri: 'test://a', name: 'a' }] })).toEqual([
      'resources.0: give exactly one of "text" or "blob"',
    ]);
    expect(await issuesOf({ resources: [{ uri: 'test://a', name: 'a', text: 'x', blob: 'eA==' }] })).toEqual([
      'resources.0: give exactly one of "text" or "blob"',
    ]);
  });

  it('refuses a blob that is not base64', async () => {
    expect(await issuesOf({ resources: [{ uri: 'test://a', name: 'a', blob: 'not base64!' }] })).toEqual([
      'resources.0.blob: must be valid base64 (RFC 4648, with padding)',
    ]);
  });

  it('refuses duplicate URIs, naming the second', async () => {
    const r = { uri: 'test://a', name: 'a', text: '' };
    expect(await issuesOf({ resources: [r, { ...r, name: 'b' }] })).toEqual([
      'resources.1.uri: duplicate resource uri "test://a"',
    ]);
  });

  it('refuses a relative URI, a priority above 1 and a non-ISO lastModified', async () => {
    expect(await issuesOf({ resources: [{ uri: 'docs/a', name: 'a', text: '' }] })).toEqual([
      expect.stringMatching(/^resources\.0\.uri: must be an absolute URI/),
    ]);
    expect(
      await issuesOf({ resources: [{ uri: 'test://a', name: 'a', text: '', annotations: { priority: 1.5 } }] }),
    ).toEqual([expect.stringMatching(/^resources\.0\.annotations\.priority: /)]);
    expect(
      await issuesOf({
        resources: [{ uri: 'test://a', name: 'a', text: '', annotations: { lastModified: 'yesterday' } }],
      }),
    ).toEqual([expect.stringMatching(/^resources\.0\.annotations\.lastModified: /)]);
  });

  it.each([
    ['test://x/{+path}', 'operator'],
    ['test://x/{id*}', 'not a simple'],
    ['test://x/{id:3}', 'not a simple'],
    ['test://x/{a,b}', 'not a simple'],
    ['test://x/{a}{b}', 'directly follows'],
    ['test://x/{a}/{a}', 'more than once'],
    ['test://x/{a', 'unmatched "{"'],
    ['test://x/a}', 'unmatched "}"'],
    ['test://x/{}', 'not a simple'],
  ])('refuses the template %s (%s)', async (uriTemplate, why) => {
    expect(await issuesOf({ templates: [{ uriTemplate, name: 't', text: '' }] })).toEqual([
      expect.stringMatching(new RegExp(`^templates\\.0\\.uriTemplate: .*${why.replace(/[{}"]/g, '.')}`)),
    ]);
  });

  it('refuses a placeholder that names no template variable (a typo)', async () => {
    expect(await issuesOf({ templates: [{ uriTemplate: 'test://x/{id}', name: 't', text: '{{idd}}' }] })).toEqual([
      'templates.0.text: placeholder "{{idd}}" names no variable of the uriTemplate',
    ]);
  });
});
