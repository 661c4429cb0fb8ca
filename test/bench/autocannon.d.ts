/** The slice of autocannon 8's programmatic API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }
    interface RequestSpec extends Request {
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined;
      onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: unknown) => void;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      pipelining?: number;
      timeout?: number;
      title?: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: RequestSpec[];
    }
    interface Histogram {
      min: number;
      max: number;
      average: number;
      mean: number;
      stddev: number;
      total: number;
      p2_5: number;
      p50: number;
      p75: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }
    interface Result {
      title?: string;
      url: string;
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      '2xx': number;
      resets: number;
      statusCodeStats: Record<string, { count: number }>;
    }
    interface Instance extends PromiseLike<Result> {
      stop(): void;
    }
  }
  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
