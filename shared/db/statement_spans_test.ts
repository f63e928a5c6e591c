import { deepStrictEqual as assertEquals } from "node:assert/strict";
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
