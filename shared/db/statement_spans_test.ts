import assert, { deepStrictEqual as assertEquals } from "node:assert/strict";
import { runExporting, startOtlpReceiver } from "../../scripts/otel_receive.ts";
import { createTestDatabase } from "../testing/db.ts";
import { summarize } from "./statement_spans.ts";

Deno.test("summarize() names a statement by its operation and first table, never its values", () => {
  const cases: [string, string, string | null][] = [
    ["SELECT id FROM quotes WHERE organization_id = $1", "SELECT", "quotes"],
    ["  select * from eventbus.messages m", "SELECT", "eventbus.messages"],
    ['INSERT INTO "outbox" (id) VALUES ($1)', "INSERT", "outbox"],
    ["UPDATE mail_messages SET status = 'sent'", "UPDATE", "mail_messages"],
    ["DELETE FROM webhook_events WHERE id = $1", "DELETE", "webhook_events"],
    ["WITH picked AS (SELECT id FROM outbox) UPDATE outbox o SET x = 1", "UPDATE", "outbox"],
    ["WITH a AS (SELECT 1 FROM quotes) SELECT * FROM a", "SELECT", "quotes"],
    ["begin; set local app.organization_id = '0190…'", "BEGIN", null],
    ["commit", "COMMIT", null],
    ["SELECT pg_notify($1, '')", "SELECT", null],
    ["-- why\nSELECT 1 FROM (SELECT 1) s", "SELECT", null],
  ];
  for (const [text, operation, collection] of cases) {
    assertEquals(summarize(text), { operation, collection }, text);
  }
});

// A real process with Deno's SDK on: a transaction, a cursor read and a failing statement inside
// one traced operation, and a statement outside any.
const CHILD = `
import { trace } from "@opentelemetry/api";
import { connect, transaction } from "@printshop/shared/db";
const sql = connect(Deno.env.get("DB_URL"), { schema: "public", max: 2 });
await sql\`CREATE TABLE probe (id int, secret text)\`;
await sql\`SELECT 1 AS alone\`;
await trace.getTracer("t").startActiveSpan("operation", async (span) => {
  await transaction(sql, async (tx) => {
    await tx\`INSERT INTO probe \${tx([{ id: 1, secret: "s3cr3t-value" }, { id: 2, secret: "x" }])}\`;
  });
  let batches = 0;
  for await (const _rows of sql\`SELECT id FROM probe ORDER BY id\`.cursor(1)) batches++;
  if (batches !== 2) throw new Error("cursor read " + batches);
  await sql\`SELECT no_such_column FROM probe\`.catch(() => {});
  span.end();
});
await sql.end();
`;

Deno.test("with the SDK on, each statement of a traced operation is a span named by what it does, cursors and failures included, and never holds a value", async () => {
  const db = await createTestDatabase();
  const receiver = startOtlpReceiver();
  try {
    const output = await runExporting(CHILD, receiver.url, { DB_URL: db.url });
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    const operation = receiver.spans.find((span) => span.name === "operation");
    assert.ok(operation, JSON.stringify(receiver.spans.map((s) => s.name)));
    const statements = receiver.spans.filter((span) =>
      span.attributes["db.system.name"] === "postgresql"
    );
    // Only the operation's: the CREATE and the lone SELECT were outside any trace.
    assert.ok(statements.every((span) => span.traceId === operation.traceId));
    assertEquals(statements.map((span) => span.name).sort(), [
      "BEGIN",
      "COMMIT",
      "INSERT probe",
      "SELECT probe",
      "SELECT probe",
    ]);
    assert.ok(statements.every((span) => span.kind === 3), "CLIENT spans");
    const failed = statements.filter((span) => span.attributes["error.type"] !== undefined);
    assertEquals(failed.map((span) => span.attributes["db.response.status_code"]), ["42703"]);
    const exported = receiver.raw.join("\n");
    assert.ok(!exported.includes("s3cr3t-value"), "a parameter was exported");
    assert.ok(!exported.includes("no_such_column"), "a statement's text was exported");
  } finally {
    await receiver.stop();
    await db.drop();
  }
});
