import { z } from "zod";
import { positiveInt, serviceBaseConfig } from "@printshop/shared/config";

export const ConfigSchema = z.object({
  ...serviceBaseConfig,
  PAGE_SIZE_MAX: positiveInt(200, 10_000),
});
export type Config = z.output<typeof ConfigSchema>;
