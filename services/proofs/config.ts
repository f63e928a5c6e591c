import { z } from "zod";
import { serviceBaseConfig } from "@printshop/shared/config";

export const ConfigSchema = z.object({
  ...serviceBaseConfig,
  /**
   * The mail server proofs are sent through: `smtp://user:pass@host:587` (STARTTLS when the
   * server offers it) or `smtps://…:465` (TLS from the start); `?from=proofs@shop.example` sets
   * the sender. Unset: messages stay in the local outbox, read at `GET /admin/mail`.
   */
  SMTP_URL: z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" })
    .optional(),
});
export type Config = z.output<typeof ConfigSchema>;
