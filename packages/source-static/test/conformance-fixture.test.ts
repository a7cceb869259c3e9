import { describe, expect, it } from 'vitest';
import { createSource } from './helpers.js';

// The resources and template the conformance fixture
// (test/conformance/gateway.config.json) declares, tested exactly.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQm/AfAAJ9Aa5x8yHNAAAAAElFTkSuQmCC';
const fixture = {
  resources: [
    {
      uri: 'test://static-text',
      name: 'static-text',
      mimeType: 'text/plain',
      text: 'This is the content of the static text resource.',
    },
    { uri: 'test://static-binary', name: 'static-binary', mimeType: 'image/png', blob: PNG },
  ],
  templates: [
    {
      uriTemplate: 'test://template/{id}/data',
      name: 'template',
      mimeType: 'application/json',
      text: '{"id":"{{id}}","templateTest":true,"data":"Data for ID: {{id}}"}',
    },
  ],
};

describe('the conformance fixture', () => {
  it('lists both resources with their byte sizes', async () => {
    const source = await createSource(fixture);
    const page = await source.listResources({ limit: 100 });
    expect(page.nextPosition).toBeUndefined();
    expect(page.items).toEqual([
      {
        uri: 'test://static-text',
        name: 'static-text',
        mimeType: 'text/plain',
        size: 'This is the content of the static text resource.'.length,
      },
      { uri: 'test://static-binary', name: 'static-binary', mimeType: 'image/png', size: 69 },
    ]);
  });

  it('reads the text resource', async () => {
    const source = await createSource(fixture);
    expect(await source.read('test://static-text')).toEqual([
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ]);
  });

  it('reads the binary resource as the same base64, whose bytes are a PNG', async () => {
    const source = await createSource(fixture);
    const contents = await source.read('test://static-binary');
    expect(contents).toEqual([{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG }]);
    const bytes = Buffer.from(PNG, 'base64');
    expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  });

  it('lists the template without its text', async () => {
    const source = await createSource(fixture);
    expect(await source.listTemplates()).toEqual([
      { uriTemplate: 'test://template/{id}/data', name: 'template', mimeType: 'application/json' },
    ]);
  });

  it('reads test://template/123/data as JSON naming 123', async () => {
    const source = await createSource(fixture);
    expect(source.owns('test://template/123/data')).toBe(true);
    const contents = await source.read('test://template/123/data');
    expect(contents).toHaveLength(1);
    const [entry] = contents ?? [];
    expect(entry).toMatchObject({ uri: 'test://template/123/data', mimeType: 'application/json' });
    const text = entry && 'text' in entry ? entry.text : '';
    expect(text).toContain('123');
    expect(JSON.parse(text)).toEqual({ id: '123', templateTest: true, data: 'Data for ID: 123' });
  });

  it('reports an unknown URI as not found and does not own it', async () => {
    const source = await createSource(fixture);
    for (const uri of ['test://nope', 'test://template//data', 'test://template/1/2/data', 'test://static-text/']) {
      expect(source.owns(uri), uri).toBe(false);
      expect(await source.read(uri), uri).toBeUndefined();
    }
  });

  it('is healthy', async () => {
    const source = await createSource(fixture);
    expect(await source.health()).toEqual({ ok: true });
  });
});
