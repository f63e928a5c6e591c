import assert from "node:assert/strict";
import { runExporting, startOtlpReceiver } from "./otel_receive.ts";

// A real Deno process with its built-in OpenTelemetry on, exporting to the receiver in each of
// OTLP/HTTP's encodings: a server span, a client span, a custom span, a counter and a log line.
const CHILD = `
import { metrics, trace } from "@opentelemetry/api";
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => new Response("ok"));
await trace.getTracer("t").startActiveSpan("custom work", async (span) => {
  span.setAttribute("answer", 42);
  await (await fetch("http://127.0.0.1:" + server.addr.port + "/hello")).text();
  span.end();
});
metrics.getMeter("m").createCounter("things.done", { unit: "{thing}" }).add(3, { kind: "x" });
console.log("a log line");
await server.shutdown();
`;

for (const protocol of ["http/protobuf", "http/json"]) {
  Deno.test(`otel:receive decodes what Deno exports over ${protocol}`, async () => {
    const receiver = startOtlpReceiver();
    try {
      const output = await runExporting(CHILD, receiver.url, {
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      });
      assert.ok(output.success, new TextDecoder().decode(output.stderr));
      const custom = receiver.spans.find((span) => span.name === "custom work");
      assert.ok(custom, JSON.stringify(receiver.spans.map((s) => s.name)));
      assert.equal(custom.service, "probe");
      assert.equal(custom.attributes.answer, 42);
      assert.match(custom.traceId, /^[0-9a-f]{32}$/);
      // The fetch inside it, and the server span of that request, are in its trace.
      const inTrace = receiver.spans.filter((span) => span.traceId === custom.traceId);
      assert.ok(inTrace.length >= 3, JSON.stringify(inTrace.map((s) => [s.name, s.kind])));
      assert.ok(inTrace.some((span) => span.parentSpanId === custom.spanId));
      const counter = receiver.points.find((point) => point.metric === "things.done");
      assert.deepEqual(
        counter && { value: counter.value, kind: counter.attributes.kind, unit: counter.unit },
        { value: 3, kind: "x", unit: "{thing}" },
      );
      // Console output is exported as log records (the reason the launcher's banner must not be).
      assert.ok(
        receiver.logs.some((log) => log.body === "a log line\n" && log.service === "probe"),
      );
    } finally {
      await receiver.stop();
    }
  });
}
