/** What the webhook end-to-end tests share: calls through the gateway and signature checks. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import type { ReceivedRequest, TestStack } from "@printshop/shared/testing";
import { waitFor } from "@printshop/shared/net";
import { connect, type Sql } from "@printshop/shared/db";

export type Json = Record<string, unknown>;

/** Calls the gateway with `key`, asserts the status, and returns the parsed envelope. */
export async function send(
  stack: TestStack,
  key: string,
  status: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<Json> {
  const res = await stack.call(key, method, path, body);
  const json = await res.json() as Json;
  assertEquals(res.status, status, `${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

export const data = (json: Json): Json => json.data as Json;

/**
 * Verifies a delivery with the `standardwebhooks` reference library (never the project's own
 * signing code); throws if the signature does not match. Returns the payload.
 */
export function verify(secret: string, request: Pick<ReceivedRequest, "headers" | "body">): Json {
  return new Webhook(secret).verify(request.body, {
    "webhook-id": request.headers.get("webhook-id") ?? "",
    "webhook-timestamp": request.headers.get("webhook-timestamp") ?? "",
    "webhook-signature": request.headers.get("webhook-signature") ?? "",
  }) as Json;
}

/** Polls `probe` until it returns a value (not undefined); fails with `what` after the deadline. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  describe?: () => Promise<string> | string,
): Promise<T> {
  let value: T | undefined;
  try {
    await waitFor(what, async () => (value = await probe()) !== undefined, timeoutMs, 100);
  } catch (error) {
    if (!describe) throw error;
    throw new Error(`${(error as Error).message}: ${await describe()}`);
  }
  return value as T;
}

/** A pool on the test database for direct SQL (schema-qualified), ended with the scope. */
export function openDb(stack: TestStack): { sql: Sql; [Symbol.asyncDispose](): Promise<void> } {
  const sql = connect(stack.db.url, { schema: "public", max: 2, applicationName: "e2e-test" });
  return { sql, [Symbol.asyncDispose]: () => sql.end() };
}
