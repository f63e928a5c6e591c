import { z } from "zod";
import { serviceBaseConfig } from "@printshop/shared/config";

export const ConfigSchema = z.object({
  ...serviceBaseConfig,
});
export type Config = z.output<typeof ConfigSchema>;
