/**
 * `deno task otel:receive`: an OTLP/HTTP receiver for looking at what the processes export
 * without a collector. It takes `POST /v1/traces`, `/v1/metrics` and `/v1/logs`, in JSON
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) or protobuf (`http/protobuf`, Deno's default), and
 * prints one line per span, data point and log record. PORT (4318, OTLP/HTTP's own) sets where.
 *
 * Protobuf is decoded by the protobufjs module generated from the OpenTelemetry protos that
 * @opentelemetry/otlp-transformer 0.52 ships; the JSON encoding is the same messages, with ids in
 * hex. Both become one shape (`Received`), which the tests read too.
 */
// @ts-types="npm:@opentelemetry/otlp-transformer@0.52.1/build/src/generated/root.d.ts"
import generated from "@opentelemetry/otlp-transformer/generated";

export interface ReceivedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: number;
}

export interface ReceivedPoint {
  service: string;
  metric: string;
  unit: string;
  attributes: Record<string, unknown>;
  /** A sum's or gauge's value; a histogram's count. */
  value: number;
  /** A histogram's sum. */
  sum?: number;
}

export interface ReceivedLog {
  service: string;
  body: unknown;
  attributes: Record<string, unknown>;
}

export interface Received {
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  logs: ReceivedLog[];
  /** Every request body as it came, decoded to text (JSON) or to JSON of the decoded message. */
  raw: string[];
}

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}

const collector = (generated as unknown as {
  opentelemetry: {
    proto: {
      collector: Record<"trace" | "metrics" | "logs", { v1: Record<string, ProtoType> }>;
    };
  };
}).opentelemetry.proto.collector;

const REQUESTS: Record<string, ProtoType> = {
  "/v1/traces": collector.trace.v1.ExportTraceServiceRequest!,
  "/v1/metrics": collector.metrics.v1.ExportMetricsServiceRequest!,
  "/v1/logs": collector.logs.v1.ExportLogsServiceRequest!,
};

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => Array.isArray(value) ? value as Json[] : [];

/** Ids come as hex (JSON) or base64 (protobuf decoded with `bytes: String`): hex either way. */
function hexId(value: unknown, protobuf: boolean): string {
  if (typeof value !== "string" || value === "") return "";
  if (!protobuf) return value.toLowerCase();
  return Array.from(atob(value), (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
}

function anyValue(value: unknown): unknown {
  const v = (value ?? {}) as Json;
  if ("stringValue" in v) return v.stringValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("boolValue" in v) return v.boolValue;
  if ("arrayValue" in v) return list((v.arrayValue as Json).values).map(anyValue);
  if ("kvlistValue" in v) return attributes((v.kvlistValue as Json).values);
  if ("bytesValue" in v) return v.bytesValue;
  return null;
}

function attributes(value: unknown): Record<string, unknown> {
  return Object.fromEntries(list(value).map((kv) => [String(kv.key), anyValue(kv.value)]));
}

function serviceOf(resource: unknown): string {
  const name = attributes((resource as Json | undefined)?.attributes)["service.name"];
  return typeof name === "string" ? name : "";
}

/** Adds what one export request carries to `into`. */
export function absorb(path: string, message: Json, protobuf: boolean, into: Received): void {
  if (path === "/v1/traces") {
    for (const rs of list(message.resourceSpans)) {
      const service = serviceOf(rs.resource);
      for (const ss of list(rs.scopeSpans)) {
        for (const span of list(ss.spans)) {
          into.spans.push({
            service,
            name: String(span.name ?? ""),
            kind: Number(span.kind ?? 0),
            traceId: hexId(span.traceId, protobuf),
            spanId: hexId(span.spanId, protobuf),
            parentSpanId: hexId(span.parentSpanId, protobuf),
            attributes: attributes(span.attributes),
            links: list(span.links).map((link) => ({
              traceId: hexId(link.traceId, protobuf),
              spanId: hexId(link.spanId, protobuf),
            })),
            status: Number((span.status as Json | undefined)?.code ?? 0),
          });
        }
      }
    }
  } else if (path === "/v1/metrics") {
    for (const rm of list(message.resourceMetrics)) {
      const service = serviceOf(rm.resource);
      for (const sm of list(rm.scopeMetrics)) {
        for (const metric of list(sm.metrics)) {
          const name = String(metric.name ?? "");
          const unit = String(metric.unit ?? "");
          const data = (metric.sum ?? metric.gauge ?? metric.histogram) as Json | undefined;
          for (const point of list(data?.dataPoints)) {
            const histogram = metric.histogram !== undefined;
            into.points.push({
              service,
              metric: name,
              unit,
              attributes: attributes(point.attributes),
              value: Number(histogram ? point.count : point.asDouble ?? point.asInt ?? 0),
              ...(histogram ? { sum: Number(point.sum ?? 0) } : {}),
            });
          }
        }
      }
    }
  } else if (path === "/v1/logs") {
    for (const rl of list(message.resourceLogs)) {
      const service = serviceOf(rl.resource);
      for (const sl of list(rl.scopeLogs)) {
        for (const record of list(sl.logRecords)) {
          into.logs.push({
            service,
            body: anyValue(record.body),
            attributes: attributes(record.attributes),
          });
        }
      }
    }
  }
}

export interface OtlpReceiver extends Received {
  url: string;
  stop(): Promise<void>;
}

/** A receiver on loopback (`port` 0: any free one), keeping everything it decodes. */
/**
 * Runs `source` as a Deno program of this workspace with Deno's SDK on, exporting to `receiverUrl`
 * as `probe` (tests: what a real process exports). Its output, once it has exited.
 */
export async function runExporting(
  source: string,
  receiverUrl: string,
  env: Record<string, string> = {},
): Promise<Deno.CommandOutput> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/child.ts`, source);
    return await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        new URL("../deno.json", import.meta.url).pathname,
        `${dir}/child.ts`,
      ],
      cwd: new URL("..", import.meta.url).pathname,
      env: {
        OTEL_DENO: "true",
        OTEL_SERVICE_NAME: "probe",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
        ...env,
      },
    }).output();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export function startOtlpReceiver(
  options: { port?: number; hostname?: string; onAbsorbed?: (path: string) => void } = {},
): OtlpReceiver {
  const received: Received = { spans: [], points: [], logs: [], raw: [] };
  const server = Deno.serve(
    { hostname: options.hostname ?? "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    async (request) => {
      const path = new URL(request.url).pathname;
      const type = REQUESTS[path];
      if (request.method !== "POST" || !type) {
        await request.body?.cancel();
        return new Response(null, { status: 404 });
      }
      const bytes = new Uint8Array(await request.arrayBuffer());
      const protobuf = !(request.headers.get("content-type") ?? "").includes("json");
      let message: Json;
      try {
        message = protobuf
          ? type.toObject(type.decode(bytes), {
            longs: String,
            bytes: String,
            defaults: false,
          }) as Json
          : JSON.parse(new TextDecoder().decode(bytes)) as Json;
      } catch (error) {
        return new Response(`cannot decode: ${String(error)}`, { status: 400 });
      }
      received.raw.push(protobuf ? JSON.stringify(message) : new TextDecoder().decode(bytes));
      absorb(path, message, protobuf, received);
      options.onAbsorbed?.(path);
      // An empty ExportServiceResponse, in the request's own encoding.
      return protobuf
        ? new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } })
        : Response.json({});
    },
  );
  return Object.assign(received, {
    url: `http://${server.addr.hostname}:${server.addr.port}`,
    stop: () => server.shutdown(),
  });
}

if (import.meta.main) {
  const port = Number(Deno.env.get("PORT") ?? 4318);
  let shown = { spans: 0, points: 0, logs: 0 };
  const receiver = startOtlpReceiver({
    port,
    onAbsorbed: () => {
      for (const span of receiver.spans.slice(shown.spans)) {
        const parent = span.parentSpanId ? ` parent=${span.parentSpanId}` : "";
        console.log(
          `span   ${span.service.padEnd(10)} ${span.name}  trace=${span.traceId} ` +
            `span=${span.spanId}${parent} ${JSON.stringify(span.attributes)}`,
        );
      }
      for (const point of receiver.points.slice(shown.points)) {
        const sum = point.sum !== undefined ? ` sum=${point.sum}` : "";
        console.log(
          `metric ${point.service.padEnd(10)} ${point.metric} ${
            JSON.stringify(point.attributes)
          } ` +
            `${point.value}${sum}${point.unit ? ` ${point.unit}` : ""}`,
        );
      }
      for (const log of receiver.logs.slice(shown.logs)) {
        console.log(`log    ${log.service.padEnd(10)} ${JSON.stringify(log.body)}`);
      }
      shown = {
        spans: receiver.spans.length,
        points: receiver.points.length,
        logs: receiver.logs.length,
      };
    },
  });
  console.log(`OTLP/HTTP receiver on ${receiver.url} (set OTEL_EXPORTER_OTLP_ENDPOINT to it)`);
}
