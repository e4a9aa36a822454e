/** The dev dependency parse-prometheus-text-format ships no types: what the metrics spec uses of it. */
declare module 'parse-prometheus-text-format' {
  interface MetricFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: unknown[];
  }
  /** Parses the Prometheus text format; throws on a line it cannot read. */
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
