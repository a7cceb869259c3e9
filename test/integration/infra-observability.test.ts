import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { analysePromql } from '@mcpgw/test-helpers/promql';

// The Grafana dashboard and the Prometheus alerts against the metric contract of
// docs/operations.md: every expression parses with Prometheus' grammar and uses only contract
// metrics and labels, the dashboard shows every contract metric, and the alerts the issue names
// exist. The gateway's /metrics must then expose exactly this contract.

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface ContractMetric {
  type: 'counter' | 'gauge' | 'histogram';
  labels: string[];
}

/** The "Metric contract" table of docs/operations.md. */
function readContract(): Map<string, ContractMetric> {
  const doc = read('docs/operations.md');
  const section = doc.slice(doc.indexOf('## Metric contract'));
  const table = section.slice(0, section.indexOf('\n## ', 1));
  const contract = new Map<string, ContractMetric>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const name = /^`([a-z_:][a-z0-9_:]*)`$/.exec(cells[1] ?? '')?.[1];
    if (name === undefined) continue;
    const labels = [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string);
    contract.set(name, { type: cells[2] as ContractMetric['type'], labels });
  }
  return contract;
}

const contract = readContract();
/** Labels Prometheus attaches to every scraped series. */
const TARGET_LABELS = ['instance', 'job', 'pod', 'namespace'];

/** Resolves a series name to its contract metric (`x_bucket` → histogram `x`) and the labels it carries. */
function resolve(series: string): { metric: string; labels: string[] } | undefined {
  const direct = contract.get(series);
  if (direct !== undefined) return { metric: series, labels: [...direct.labels, ...TARGET_LABELS] };
  const match = /^(.*)_(bucket|sum|count)$/.exec(series);
  const base = match === null ? undefined : contract.get(match[1] as string);
  if (match === null || base?.type !== 'histogram') return undefined;
  const extra = match[2] === 'bucket' ? ['le'] : [];
  return { metric: match[1] as string, labels: [...base.labels, ...extra, ...TARGET_LABELS] };
}

/** Checks one expression against the contract; returns the contract metrics it uses. */
function checkExpression(where: string, expression: string): string[] {
  const usage = analysePromql(expression);
  expect(usage.errors, `${where}: PromQL syntax errors in ${expression}`).toEqual([]);
  const available = new Set<string>();
  const used: string[] = [];
  for (const selector of usage.selectors) {
    const resolved = resolve(selector.metric);
    expect(resolved, `${where}: ${selector.metric} is not in the metric contract`).toBeDefined();
    if (resolved === undefined) continue;
    used.push(resolved.metric);
    for (const label of selector.labels) {
      expect(resolved.labels, `${where}: ${selector.metric} has no label ${label}`).toContain(label);
    }
    resolved.labels.forEach((label) => available.add(label));
  }
  for (const label of usage.groupingLabels) {
    expect([...available], `${where}: grouping by ${label}, which no selected metric has`).toContain(label);
  }
  return used;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Array<{ refId: string; expr: string }>;
  panels?: Panel[];
}
const dashboard = JSON.parse(read('infra/grafana/mcp-gateway.json')) as {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string } }> };
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}
const rules = (
  parseYaml(read('infra/prometheus/alerts.yaml')) as { groups: Array<{ name: string; rules: Rule[] }> }
).groups.flatMap((g) => g.rules);

describe('metric contract (docs/operations.md)', () => {
  it('lists the metrics the issue asks for, each with a type', () => {
    for (const name of [
      'mcpgw_requests_total',
      'mcpgw_request_duration_seconds',
      'mcpgw_cache_operations_total',
      'mcpgw_backend_duration_seconds',
      'mcpgw_backend_errors_total',
      'mcpgw_source_up',
      'mcpgw_redis_circuit_open',
      'mcpgw_jwks_fetches_total',
      'mcpgw_introspection_requests_total',
      'mcpgw_listen_streams',
      'mcpgw_rate_limited_total',
      'mcpgw_shed_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(contract.has(name), name).toBe(true);
    }
    for (const [name, metric] of contract) {
      expect(['counter', 'gauge', 'histogram'], name).toContain(metric.type);
      // Prometheus naming: counters end in _total, histograms name their unit.
      if (metric.type === 'counter') expect(name).toMatch(/_total$/);
      if (metric.type === 'histogram') expect(name).toMatch(/_seconds$/);
    }
    expect(contract.get('mcpgw_requests_total')?.labels).toEqual(['tenant', 'method', 'outcome']);
  });

  it('never labels by something unbounded', () => {
    const labels = new Set([...contract.values()].flatMap((m) => m.labels));
    for (const unbounded of ['uri', 'subject', 'sub', 'token', 'client_id', 'cursor', 'principal']) {
      expect(labels.has(unbounded), unbounded).toBe(false);
    }
  });
});

describe('infra/grafana/mcp-gateway.json', () => {
  it('queries only contract metrics and labels, in valid PromQL', () => {
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) checkExpression(`panel "${panel.title}"`, target.expr);
    }
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
      const match = /^label_values\((.+),\s*([a-z_]+)\)$/.exec(query);
      expect(match, `variable ${variable.name}`).not.toBeNull();
      checkExpression(`variable ${variable.name}`, `sum by (${match?.[2]}) (${match?.[1]})`);
    }
  });

  it('shows every metric of the contract', () => {
    const used = new Set(
      panels.flatMap((p) => (p.targets ?? []).flatMap((t) => checkExpression(`panel "${p.title}"`, t.expr))),
    );
    expect([...contract.keys()].filter((name) => !used.has(name))).toEqual([]);
  });

  it('is an importable dashboard: unique ids, panels on the 24-column grid without overlap, one data source variable', () => {
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const cells = new Set<string>();
    for (const { title, gridPos } of panels) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps another panel`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
    expect(dashboard.templating.list.find((v) => v.type === 'datasource')?.name).toBe('datasource');
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size, panel.title).toBe(refIds.length);
    }
  });
});

describe('infra/prometheus/alerts.yaml', () => {
  it('has well-formed rules on contract metrics, whose annotations name only labels the expression keeps', () => {
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const rule of rules) {
      checkExpression(`alert ${rule.alert}`, rule.expr);
      expect(rule.alert).toMatch(/^McpGateway[A-Za-z0-9]+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
      expect(['page', 'ticket'], rule.alert).toContain(rule.labels.severity);
      expect(rule.annotations.summary, rule.alert).toBeTruthy();
      expect(rule.annotations.description, rule.alert).toBeTruthy();
      const kept = analysePromql(rule.expr).groupingLabels;
      const text = `${rule.annotations.summary} ${rule.annotations.description}`;
      for (const [, label] of text.matchAll(/\$labels\.([a-z_]+)/g)) {
        expect(kept, `${rule.alert} annotates with ${label}`).toContain(label);
      }
    }
  });

  it('covers the failures the issue names: error ratio, p99, a source down, Redis circuit open', () => {
    const find = (test: (rule: Rule) => boolean) => rules.filter(test).map((r) => r.alert);
    expect(find((r) => /mcpgw_requests_total\{outcome=~/.test(r.expr) && r.expr.includes('/'))).not.toEqual([]);
    expect(find((r) => /histogram_quantile\(0\.99,.*mcpgw_request_duration_seconds_bucket/.test(r.expr))).not.toEqual(
      [],
    );
    expect(find((r) => /mcpgw_source_up\)? == 0/.test(r.expr))).not.toEqual([]);
    expect(find((r) => /mcpgw_redis_circuit_open\)? == 1/.test(r.expr))).not.toEqual([]);
  });

  it('is checked for real: an unknown metric or a misspelt label fails', () => {
    expect(() => checkExpression('probe', 'sum by (tenant) (rate(mcpgw_requests_totl[5m]))')).toThrow(/contract/);
    expect(() => checkExpression('probe', 'sum by (tennant) (rate(mcpgw_requests_total[5m]))')).toThrow(/tennant/);
    expect(() => checkExpression('probe', 'rate(mcpgw_shed_total{scope="ip"}[5m])')).toThrow(/scope/);
    expect(() => checkExpression('probe', 'sum(rate(mcpgw_shed_total[5m])')).toThrow(/syntax/);
  });
});
