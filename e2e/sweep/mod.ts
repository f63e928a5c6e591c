/**
 * Every service's sweep module, in the order their fixtures are made. A new service is one line
 * here; a new resource never touches this file, only its service's module.
 */
import type { ServiceSweep } from "./sweep.ts";
import { webhooksSweep } from "./webhooks.ts";
import { quotesSweep } from "./quotes.ts";
import { catalogueSweep } from "./catalogue.ts";
import { crmSweep } from "./crm.ts";
import { proofsSweep } from "./proofs.ts";

export * from "./sweep.ts";

/**
 * Webhooks first: its subscription must exist before the quotes module creates the quote whose
 * delivery it waits for. Then each module after those whose fixtures it names (a task names a
 * quote, a mock a quote).
 */
export const SWEEPS: readonly ServiceSweep[] = [
  webhooksSweep,
  quotesSweep,
  catalogueSweep,
  crmSweep,
  proofsSweep,
];
