import { connect } from "../db/mod.ts";
import { EVENT_DEFINITIONS, type EventOwner } from "../events/mod.ts";
import type { TestStack } from "./stack.ts";

/** The event types an owner's outbox holds now, sorted. */
export async function emittedBy(stack: TestStack, owner: EventOwner): Promise<string[]> {
  const sql = connect(stack.db.url, { schema: owner, max: 1 });
  try {
    const rows = await sql<{ type: string }[]>`SELECT DISTINCT type FROM outbox ORDER BY type`;
    return rows.map((r) => r.type);
  } finally {
    await sql.end();
  }
}

/** The event types the contracts declare for an owner, sorted. */
export function declaredBy(owner: EventOwner): string[] {
  return EVENT_DEFINITIONS.filter((d) => d.service === owner).map((d) => d.type).sort();
}
