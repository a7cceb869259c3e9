import type { Logger } from '@mcpgw/core';
import type * as OidcProviderModuleNamespace from 'oidc-provider';

type OidcProviderModule = typeof OidcProviderModuleNamespace;

// oidc-provider prints its notices with console.info / console.warn, prefixed
// (and colored on a TTY); everything else on the console passes through.
// eslint-disable-next-line no-control-regex -- the ANSI escape (ESC) is what the color codes start with
const NOTICE = /^(?:\x1b\[[\d;]*m)?oidc-provider (?:NOTICE|WARNING): (.*?)(?:\x1b\[0m)?$/s;

let depth = 0;
let restore: (() => void) | undefined;
const sinks: Logger[] = [];

/**
 * Runs `work` while oidc-provider's console notices go to `logger` (debug)
 * instead of the terminal. They are advice for production deployments (Node
 * 22 recommended, memory adapter, default pages), and this server is the
 * development one. Only `work` itself may print them: the import (which
 * checks the runtime) and the Provider constructor (which checks features).
 */
export async function routeProviderNotices<T>(logger: Logger, work: () => T | Promise<T>): Promise<T> {
  if (depth++ === 0) {
    const { info, warn } = console;
    const route =
      (original: (...args: unknown[]) => void) =>
      (...args: unknown[]) => {
        const match = args.length === 1 && typeof args[0] === 'string' ? NOTICE.exec(args[0]) : null;
        if (match === null) return original.apply(console, args);
        for (const sink of sinks.slice(-1)) sink.debug({ notice: match[1] }, 'oidc-provider notice');
      };
    console.info = route(info);
    console.warn = route(warn);
    restore = () => {
      console.info = info;
      console.warn = warn;
    };
  }
  sinks.push(logger);
  try {
    return await work();
  } finally {
    sinks.splice(sinks.lastIndexOf(logger), 1);
    if (--depth === 0) restore?.();
  }
}

let loading: Promise<OidcProviderModule> | undefined;

/** Imports oidc-provider once, with its import-time runtime notice routed to `logger`. */
export function importOidcProvider(logger: Logger): Promise<OidcProviderModule> {
  loading ??= routeProviderNotices(logger, () => import('oidc-provider'));
  return loading;
}
