import {
  type Attributes,
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/**
 * Spans go through @opentelemetry/api only; Deno's built-in exporter (OTEL_DENO=true) supplies
 * the SDK, so nothing is exported unless an operator turns it on.
 */
export const tracer = trace.getTracer("printshop");

export { SpanKind };

/**
 * The variables Deno's runtime reads for its OpenTelemetry SDK, which no config schema of ours
 * knows (the processes never read them): where compose sets them, they are held to this list.
 */
/**
 * The share of traces the README recommends keeping (`parentbased_traceidratio`): what compose
 * sets by default and what the bench measures export at.
 */
export const RECOMMENDED_TRACE_SAMPLE = "0.01";

export const RUNTIME_TELEMETRY_VARIABLES: readonly string[] = [
  "OTEL_DENO",
  "OTEL_SERVICE_NAME",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
  "OTEL_METRIC_EXPORT_INTERVAL",
  "OTEL_DENO_CONSOLE",
];

/** Where a span belongs when it is not where the code runs: work an event carried on. */
export interface SpanOrigin {
  /** The W3C traceparent the work continues (an event's, from its outbox row). */
  parent?: string | null | undefined;
  /** Others it also serves (the rest of a batch's events), as links. */
  links?: readonly (string | null | undefined)[];
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a traceparent names, as a remote parent or a link; null when malformed. */
export function remoteSpanContext(traceparent: string | null | undefined): SpanContext | null {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: parseInt(match[3]!, 16) & 1,
    isRemote: true,
  };
}

/**
 * The origin of work done for a batch of events: the first one's trace continues, the others are
 * linked (the messaging conventions' choice for a batch).
 */
export function batchOrigin(traceparents: readonly (string | null | undefined)[]): SpanOrigin {
  const [first, ...rest] = traceparents;
  return { parent: first, links: rest };
}

export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
  origin: SpanOrigin = {},
): Promise<T> {
  const parent = remoteSpanContext(origin.parent);
  const links = (origin.links ?? []).flatMap((traceparent) => {
    const linked = remoteSpanContext(traceparent);
    return linked ? [{ context: linked }] : [];
  });
  const base = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : context.active();
  return await tracer.startActiveSpan(name, { kind, attributes, links }, base, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * The active trace as a W3C traceparent, for work that continues it later from a row (an outbox
 * event, a queued mail); null when no SDK traces (the API's propagator writes nothing then).
 */
export function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

const getter = {
  keys: (carrier: Headers): string[] => [...carrier.keys()],
  get: (carrier: Headers, key: string): string | undefined => carrier.get(key) ?? undefined,
};

/** Runs fn inside the trace context carried by incoming headers (W3C traceparent). */
export function withIncomingContext<T>(headers: Headers, fn: () => T): T {
  return context.with(propagation.extract(context.active(), headers, getter), fn);
}

/**
 * Writes the active trace context into outgoing headers. When no SDK is registered the API's
 * propagator is a no-op, so the caller's own `traceparent` is passed through unchanged and the
 * trace still joins up across processes.
 */
export function propagateTrace(incoming: Headers, outgoing: Headers): void {
  for (const name of ["traceparent", "tracestate"]) {
    const value = incoming.get(name);
    if (value) outgoing.set(name, value);
  }
  propagation.inject(context.active(), outgoing, {
    set: (carrier: Headers, key: string, value: string) => carrier.set(key, value),
  });
}

/** Trace id for log correlation: from the active span, else from an incoming traceparent. */
export function currentTraceId(headers?: Headers): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext && spanContext.traceId !== "00000000000000000000000000000000") {
    return spanContext.traceId;
  }
  const parent = headers?.get("traceparent");
  const match = parent?.match(/^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/);
  return match?.[1];
}

/** The provider the API answers with while no SDK has registered one. */
const NO_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether spans go anywhere: an SDK registered a tracer provider (Deno's own, with
 * OTEL_DENO=true). Without one every span is a no-op, and building one on every request, with
 * the contexts it is carried in, is a cost for nothing.
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider &&
    provider.getDelegate() === NO_TRACER_PROVIDER);
}

/**
 * Whether the work running now belongs to a trace the sampler kept: a span of its own (a proxied
 * call, a statement) would be recorded. Under a trace it dropped, or outside any, such a span is
 * built for nothing: with `parentbased_traceidratio` at 0.1, nine requests in ten.
 */
export function inRecordedTrace(): boolean {
  return trace.getActiveSpan()?.isRecording() ?? false;
}
