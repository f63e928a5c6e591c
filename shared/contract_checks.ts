/**
 * Contract checks: when on, what the code does is held to what the contracts declare while it
 * runs. Every event payload is parsed against its event's schema, every operation may write only
 * the events it declares, and every success response is parsed against the operation's response
 * schema. The test command turns them on for every test and every process a test starts;
 * production leaves them off, as each costs a parse per event or response.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { z } from "zod";
import { validate } from "./http/validation.ts";

/** The variable that turns the checks on. */
export const CONTRACT_CHECKS_ENV = "PRINTSHOP_CONTRACT_CHECKS";

function readSetting(): boolean {
  let value: string | undefined;
  try {
    value = Deno.env.get(CONTRACT_CHECKS_ENV);
  } catch {
    // A process without access to the environment runs without the checks.
    return false;
  }
  if (value === undefined || value === "" || value === "false") return false;
  if (value === "true") return true;
  throw new Error(
    `Invalid configuration: ${CONTRACT_CHECKS_ENV} must be true or false (got ${
      JSON.stringify(value)
    })`,
  );
}

export const CONTRACT_CHECKS: boolean = readSetting();

/** A broken contract: a bug in the code, never the caller's fault, so it is answered as a 500. */
export class ContractViolation extends Error {
  override name = "ContractViolation";
}

/** Parses `value` with `schema`, throwing a ContractViolation that lists every problem. */
export function assertMatches(schema: z.ZodType, value: unknown, what: string): void {
  const result = validate(schema, value);
  if (result.success) return;
  const problems = result.details.map((d) => `${d.path || "(root)"}: ${d.message}`).join("; ");
  throw new ContractViolation(`${what} does not match its declared schema: ${problems}`);
}

interface RunningOperation {
  operationId: string;
  events: readonly string[];
}

const running = new AsyncLocalStorage<RunningOperation>();

/**
 * Runs an operation's handler with its checks on (an app may turn them on for itself, as a test
 * of the checks does), so that `writeEvent` knows which operation it is in.
 */
export function runChecked<T>(operation: RunningOperation, fn: () => T): T {
  return running.run(operation, fn);
}

/** Whether the code running now is held to its contracts. */
export function checking(): boolean {
  return CONTRACT_CHECKS || running.getStore() !== undefined;
}

/** Inside a checked operation, an event it does not declare is a ContractViolation. */
export function assertEventDeclared(type: string): void {
  const operation = running.getStore();
  if (operation === undefined || operation.events.includes(type)) return;
  throw new ContractViolation(
    `Operation ${operation.operationId} wrote event "${type}", which its declaration does not ` +
      `list (it lists ${operation.events.map((e) => `"${e}"`).join(", ") || "none"})`,
  );
}
