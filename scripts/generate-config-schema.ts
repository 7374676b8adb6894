/**
 * `npm run schema`: writes config/schema.json from the zod ConfigSchema (C1).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_SCHEMA_PATH, configJsonSchemaText } from '../src/config/json-schema.js';

const target = path.resolve(import.meta.dirname, '..', CONFIG_SCHEMA_PATH);
writeFileSync(target, configJsonSchemaText());
process.stderr.write(`wrote ${path.relative(process.cwd(), target)}\n`);
