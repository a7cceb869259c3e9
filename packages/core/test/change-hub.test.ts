import { describe, expect, it, vi } from 'vitest';
import { ChangeHub, type ChangeEvent } from '../src/change-hub.js';
import { diffFingerprints } from '../src/fingerprint.js';
import type { Logger } from '../src/logger.js';
import type { SourceChange } from '../src/source.js';

function recordingLogger() {
  const lines: Array<{ level: string; fields: object; msg?: string }> = [];
  const logger: Logger = {
    debug: (fields, msg) => lines.push({ level: 'debug', fields, msg }),
    info: (fields, msg) => lines.push({ level: 'info', fields, msg }),
    warn: (fields, msg) => lines.push({ level: 'warn', fields, msg }),
    error: (fields, msg) => lines.push({ level: 'error', fields, msg }),
    child: () => logger,
  };
  return { logger, lines };
}

const uris = {
  uri: (key: string) => `x:///s/${key}`,
  containers: (key: string) => [`x:///s/${key.slice(0, key.lastIndexOf('/') + 1)}`],
};

describe('diffFingerprints', () => {
  it('names added, removed and changed keys in key order', () => {
    const before = new Map([
      ['b', '1'],
      ['a', '1'],
      ['gone', '1'],
    ]);
    const after = new Map([
      ['new', '1'],
      ['b', '2'],
      ['a', '1'],
    ]);
    expect(diffFingerprints(before, after)).toEqual({ added: ['new'], removed: ['gone'], changed: ['b'] });
    expect(diffFingerprints(after, after)).toEqual({ added: [], removed: [], changed: [] });
  });
});

describe('ChangeHub', () => {
  it('starts detection with the first listener and stops it after the last', () => {
    const start = vi.fn();
    const stop = vi.fn();
    const hub = new ChangeHub({ sourceId: 's', logger: recordingLogger().logger, start, stop });
    const one = hub.subscribe(() => {});
    const two = hub.subscribe(() => {});
    expect(start).toHaveBeenCalledTimes(1);
    one();
    one(); // twice is harmless
    expect(stop).not.toHaveBeenCalled();
    two();
    expect(stop).toHaveBeenCalledTimes(1);
    expect(hub.active).toBe(false);
  });

  it('delivers to every listener when one throws, and reports the throw', () => {
    const { logger, lines } = recordingLogger();
    const hub = new ChangeHub({ sourceId: 's', logger });
    const seen: string[] = [];
    hub.subscribe(() => seen.push('first'));
    hub.subscribe(() => {
      throw new Error('listener bug');
    });
    hub.subscribe(() => seen.push('third'));
    expect(() => hub.publish({ sourceId: 's', kind: 'list_changed', uris: ['x:///s/a'] })).not.toThrow();
    expect(seen).toEqual(['first', 'third']);
    expect(lines).toEqual([
      {
        level: 'error',
        fields: { err: { name: 'Error', message: 'listener bug' }, sourceId: 's', kind: 'list_changed' },
        msg: 'change listener threw',
      },
    ]);
  });

  it('sets a baseline first, then publishes list_changed and updated with their URIs', () => {
    const hub = new ChangeHub({ sourceId: 's', logger: recordingLogger().logger, uris });
    const events: ChangeEvent[] = [];
    hub.subscribe((event) => events.push(event));
    expect(
      hub.compare(
        new Map([
          ['d/a', '1'],
          ['d/b', '1'],
        ]),
      ),
    ).toEqual([]);
    hub.compare(
      new Map([
        ['d/a', '2'],
        ['e/c', '1'],
      ]),
    );
    expect(events).toEqual([
      { sourceId: 's', kind: 'list_changed', uris: ['x:///s/d/b', 'x:///s/e/c'] },
      {
        sourceId: 's',
        kind: 'updated',
        uris: ['x:///s/d/', 'x:///s/d/a', 'x:///s/d/b', 'x:///s/e/', 'x:///s/e/c'],
        // The folders changed only through their files: each names the files.
        members: new Map([
          ['x:///s/d/', ['x:///s/d/a', 'x:///s/d/b']],
          ['x:///s/e/', ['x:///s/e/c']],
        ]),
      },
    ]);
    events.length = 0;
    hub.compare(
      new Map([
        ['d/a', '2'],
        ['e/c', '1'],
      ]),
    );
    expect(events).toEqual([]);
  });

  it('reports a part of a resource as that resource’s update because of the resource the part belongs to', () => {
    // Keys `t/<name>` are tables; `fk/<target>/<holder>` a foreign key shown in the target's description.
    const hub = new ChangeHub({
      sourceId: 's',
      logger: recordingLogger().logger,
      uris: {
        uri: (key) => `x:///s/${key}`,
        containers: () => [],
        part: (key) => {
          const [kind, target, holder] = key.split('/');
          return kind === 'fk' ? { uri: `x:///s/t/${target}`, because: `x:///s/t/${holder}` } : undefined;
        },
      },
    });
    const events: ChangeEvent[] = [];
    hub.subscribe((event) => events.push(event));
    hub.compare(new Map([['t/a', '1']]));
    hub.compare(
      new Map([
        ['t/a', '1'],
        ['fk/a/b', '1'],
      ]),
    );
    // No resource came: no list change; `a` reads differently only to whoever may see `b`.
    expect(events).toEqual([
      { sourceId: 's', kind: 'updated', uris: ['x:///s/t/a'], members: new Map([['x:///s/t/a', ['x:///s/t/b']]]) },
    ]);
  });

  it('forgets the baseline when the last listener leaves', () => {
    const hub = new ChangeHub({ sourceId: 's', logger: recordingLogger().logger, uris });
    const events: ChangeEvent[] = [];
    hub.subscribe(() => {})();
    hub.compare(new Map([['a', '1']])); // nobody listens: ignored
    hub.subscribe((event) => events.push(event));
    hub.compare(new Map([['b', '1']])); // baseline
    expect(events).toEqual([]);
  });

  it('adapts events to Source.watch changes', () => {
    const hub = new ChangeHub({ sourceId: 's', logger: recordingLogger().logger, uris });
    const changes: SourceChange[] = [];
    hub.watch((change) => changes.push(change));
    hub.publish({ sourceId: 's', kind: 'list_changed', uris: ['x:///s/a'] });
    hub.publish({
      sourceId: 's',
      kind: 'updated',
      uris: ['x:///s/a', 'x:///s/'],
      members: new Map([['x:///s/', ['x:///s/a']]]),
    });
    expect(changes).toEqual([
      { type: 'list-changed', uris: ['x:///s/a'] },
      { type: 'resource-updated', uri: 'x:///s/a' },
      { type: 'resource-updated', uri: 'x:///s/', because: ['x:///s/a'] },
    ]);
  });

  it('settles once tracked work, including work started meanwhile, is done', async () => {
    const hub = new ChangeHub({ sourceId: 's', logger: recordingLogger().logger });
    const order: string[] = [];
    let release!: () => void;
    hub.track(
      new Promise<void>((resolve) => (release = resolve)).then(() => {
        order.push('first');
        void hub.track(Promise.resolve().then(() => order.push('second')));
      }),
    );
    const settled = hub.settled().then(() => order.push('settled'));
    release();
    await settled;
    expect(order).toEqual(['first', 'second', 'settled']);
    // A failed piece of work settles too.
    void hub.track(Promise.reject(new Error('scan failed'))).catch(() => undefined);
    await expect(hub.settled()).resolves.toBeUndefined();
  });
});

describe('ChangeHub.close', () => {
  it('stops detection, drops listeners and ignores later subscriptions', () => {
    const start = vi.fn();
    const stop = vi.fn();
    const hub = new ChangeHub({ sourceId: 's', logger: recordingLogger().logger, start, stop });
    const seen: ChangeEvent[] = [];
    hub.subscribe((event) => seen.push(event));
    hub.close();
    expect(stop).toHaveBeenCalledTimes(1);
    hub.subscribe((event) => seen.push(event))();
    hub.publish({ sourceId: 's', kind: 'list_changed', uris: ['x:///s/a'] });
    expect(seen).toEqual([]);
    expect(start).toHaveBeenCalledTimes(1);
    expect(stop).toHaveBeenCalledTimes(1);
  });
});
