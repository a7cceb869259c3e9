import type { Markup, MarkupValue } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import { scrollRegionStart } from './scroll-region.js';

/** One minute of a tenant's traffic as the overview charts it (the gateway's counters, summed over replicas). */
export interface TrafficMinuteView {
  /** The minute's start, milliseconds since the epoch. */
  readonly at: number;
  readonly requests: number;
  readonly errors: number;
  readonly cacheHits: number;
  readonly cacheMisses: number;
  /** The 95th percentile latency (a bucket's upper bound), undefined with no request or beyond the last bucket. */
  readonly p95Ms: number | undefined;
  readonly meanMs: number | undefined;
}

interface Series {
  readonly id: string;
  readonly title: string;
  readonly unit: string;
  readonly values: ReadonlyArray<number | undefined>;
  /** The axis' top; undefined: the largest value. */
  readonly max?: number;
}

const WIDTH = 240;
const HEIGHT = 64;

const ratio = (part: number, whole: number): number | undefined =>
  whole === 0 ? undefined : Math.round((part / whole) * 1000) / 10;

const shown = (value: number | undefined, unit: string): string => (value === undefined ? '–' : `${value}${unit}`);

/** A bar per minute; a minute without data has no bar. Numbers only reach the SVG, as attributes. */
function chart(series: Series): Markup {
  const known = series.values.filter((value): value is number => value !== undefined);
  const top = series.max ?? Math.max(1, ...known);
  const slot = WIDTH / series.values.length;
  const latest = [...series.values].reverse().find((value) => value !== undefined);
  const peak = known.length === 0 ? undefined : Math.max(...known);
  const summary = `Last hour: latest ${shown(latest, series.unit)}, peak ${shown(peak, series.unit)}`;
  return markup`<figure class="chart">
    <figcaption id="${series.id}-title"><strong>${series.title}</strong> <span class="hint">${summary}</span></figcaption>
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" height="${HEIGHT}" preserveAspectRatio="none" role="img" aria-labelledby="${series.id}-title" focusable="false">
      <rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#f4f4f7" stroke="#8a8a96" stroke-width="1" />
      ${series.values.map((value, index) => {
        if (value === undefined || value <= 0) return '';
        const height = Math.max(1, Math.round((Math.min(value, top) / top) * (HEIGHT - 4) * 10) / 10);
        return markup`<rect x="${(index * slot + 0.5).toFixed(2)}" y="${(HEIGHT - height).toFixed(1)}" width="${Math.max(1, slot - 1).toFixed(2)}" height="${height.toFixed(1)}" fill="#0b4fb3" />`;
      })}
    </svg>
  </figure>`;
}

const minuteLabel = (at: number): string => new Date(at).toISOString().slice(11, 16);

/**
 * The tenant's last hour as four small bar charts (request rate, error rate,
 * cache hit ratio, latency), each named by its caption with the latest and
 * peak values in text, and the numbers of every minute with traffic in a
 * table (the charts' text alternative, WCAG 2.2, 1.1.1).
 */
export function trafficCharts(minutes: readonly TrafficMinuteView[]): MarkupValue {
  const busy = minutes.filter((minute) => minute.requests > 0 || minute.cacheHits + minute.cacheMisses > 0);
  const series: Series[] = [
    { id: 'chart-requests', title: 'Requests per minute', unit: '', values: minutes.map((m) => m.requests) },
    {
      id: 'chart-errors',
      title: 'Error rate',
      unit: '%',
      max: 100,
      values: minutes.map((m) => ratio(m.errors, m.requests)),
    },
    {
      id: 'chart-cache',
      title: 'Cache hit ratio',
      unit: '%',
      max: 100,
      values: minutes.map((m) => ratio(m.cacheHits, m.cacheHits + m.cacheMisses)),
    },
    { id: 'chart-latency', title: 'Latency (95th percentile)', unit: ' ms', values: minutes.map((m) => m.p95Ms) },
  ];
  return markup`<section aria-labelledby="traffic-title">
    <h2 id="traffic-title">Traffic, last hour</h2>
    <p class="hint">
      Every replica's MCP requests to this tenant, per minute (UTC). An error is any answer but a success: a refusal
      or a JSON-RPC error. The cache hit ratio counts lookups of callers' results.
    </p>
    <div class="charts">${series.map(chart)}</div>
    ${
      busy.length === 0
        ? markup`<p>No request in the last hour.</p>`
        : markup`<details>
            <summary>The numbers, per minute</summary>
            ${scrollRegionStart('Traffic per minute')}
              <table>
                <thead>
                  <tr>
                    <th scope="col">Minute (UTC)</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Errors</th>
                    <th scope="col">Cache hits</th>
                    <th scope="col">Latency p95</th>
                    <th scope="col">Latency mean</th>
                  </tr>
                </thead>
                <tbody>
                  ${busy.map(
                    (m) => markup`<tr>
                      <th scope="row">${minuteLabel(m.at)}</th>
                      <td>${m.requests}</td>
                      <td>${m.errors} (${shown(ratio(m.errors, m.requests), '%')})</td>
                      <td>${m.cacheHits} of ${m.cacheHits + m.cacheMisses}</td>
                      <td>${shown(m.p95Ms, ' ms')}</td>
                      <td>${shown(m.meanMs, ' ms')}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>
            </div>
          </details>`
    }
  </section>`;
}
