import { runService } from "@printshop/shared/service-main";
import { webhooksService } from "./app.ts";
import { webhooksBackground } from "./background.ts";

await runService({ ...webhooksService, background: webhooksBackground });
