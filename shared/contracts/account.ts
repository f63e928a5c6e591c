import { z } from "zod";
import { Uuid } from "./common.ts";

export const Me = z.object({
  organization: z.object({ id: Uuid, name: z.string() }),
  credential: z.object({ kind: z.enum(["tenant_key", "partner"]), id: Uuid }),
  scopes: z.array(z.string()),
}).meta({ id: "Me" });

export const Limits = z.object({
  pageSizeMax: z.int(),
  bulkMaxRows: z.int(),
  maxBodyBytes: z.int(),
  idempotencyKeyMaxLength: z.int(),
  rateLimit: z.object({ requestsPerMinute: z.int(), burst: z.int() }),
  webhookSecretOverlapHours: z.int(),
}).meta({ id: "Limits" });
