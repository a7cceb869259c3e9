import { parser } from '@prometheus-io/lezer-promql';

/** What a PromQL expression uses: the metrics it selects, with the labels it matches on, and the labels it groups by. */
export interface PromqlUsage {
  selectors: Array<{ metric: string; labels: string[] }>;
  groupingLabels: string[];
  /** Syntax errors as character offsets; empty when the expression parses. */
  errors: number[];
}

/**
 * Parses a PromQL expression with Prometheus' own grammar (the lezer parser
 * its web UI uses). Grafana's interval variables (`$__rate_interval`, …) are
 * replaced by a duration first; other `$variables` may only appear inside
 * label-value strings, where they are plain text to PromQL.
 */
export function analysePromql(expression: string): PromqlUsage {
  const source = expression.replace(/\$__(rate_)?interval|\$__range/g, '5m');
  const tree = parser.parse(source);
  const usage: PromqlUsage = { selectors: [], groupingLabels: [], errors: [] };
  const text = (from: number, to: number) => source.slice(from, to);
  tree.iterate({
    enter(node) {
      if (node.type.isError) usage.errors.push(node.from);
      if (node.name === 'VectorSelector') {
        const metric = node.node.getChild('Identifier');
        const labels: string[] = [];
        node.node.cursor().iterate((child) => {
          if (child.name === 'LabelName') labels.push(text(child.from, child.to));
        });
        usage.selectors.push({ metric: metric === null ? '' : text(metric.from, metric.to), labels });
        return false;
      }
      if (node.name === 'GroupingLabels') {
        node.node.cursor().iterate((child) => {
          if (child.name === 'LabelName') usage.groupingLabels.push(text(child.from, child.to));
        });
        return false;
      }
      return undefined;
    },
  });
  return usage;
}
