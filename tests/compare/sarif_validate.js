// SPDX-License-Identifier: MIT
// Validate SARIF files against the SARIF 2.1.0 JSON schema (rtm.5, as
// @microsoft/jest-sarif ships it) with ajv 6 (draft-04 meta-schema).
// Usage: node sarif_validate.js NODE_MODULES FILE...
// Exit 0 every file valid; 1 one is not (the errors are printed).
'use strict';
const path = require('path');
const fs = require('fs');
const modules = process.argv[2];
const Ajv = require(path.join(modules, 'ajv'));
const schema = require(path.join(modules,
    '@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json'));
const ajv = new Ajv({schemaId: 'id', allErrors: true, logger: false});
ajv.addMetaSchema(require(path.join(modules,
    'ajv/lib/refs/json-schema-draft-04.json')));
const validate = ajv.compile(schema);
let failed = 0;
for (const file of process.argv.slice(3)) {
    const log = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (log.version !== '2.1.0') {
        console.log(`${file}: version is ${log.version}, not 2.1.0`);
        failed++;
    } else if (!validate(log)) {
        console.log(`${file}: not valid SARIF 2.1.0:`);
        for (const e of validate.errors)
            console.log(`  ${e.dataPath || '/'}: ${e.message}`);
        failed++;
    } else {
        const n = log.runs.reduce((k, r) => k + r.results.length, 0);
        console.log(`${file}: valid SARIF 2.1.0 (${schema.title}), ${n} results`);
    }
}
process.exit(failed ? 1 : 0);
