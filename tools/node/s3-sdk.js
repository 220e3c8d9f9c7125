#!/usr/bin/env node
// The official AWS SDK for JavaScript (@aws-sdk/client-s3) against the tests' bucket, for
// t/127's interoperability check: "get" writes an object's bytes to stdout, "put" stores
// stdin's bytes at a key (with a content type).
//
//   node s3-sdk.js get|put --endpoint URL --bucket B --key K --secret S --object KEY [--type T]
'use strict';

const { S3Client, GetObjectCommand, PutObjectCommand } = require('@aws-sdk/client-s3');

const [cmd, ...rest] = process.argv.slice(2);
const opt = { region: 'us-east-1' };
for (let i = 0; i < rest.length; i += 2) { opt[rest[i].replace(/^--/, '')] = rest[i + 1]; }

const client = new S3Client({
    endpoint: opt.endpoint, region: opt.region, forcePathStyle: true,
    credentials: { accessKeyId: opt.key, secretAccessKey: opt.secret },
});

async function main() {
    if (cmd === 'get') {
        const out = await client.send(new GetObjectCommand({ Bucket: opt.bucket, Key: opt.object }));
        process.stdout.write(Buffer.from(await out.Body.transformToByteArray()));
    } else if (cmd === 'put') {
        const chunks = [];
        for await (const c of process.stdin) { chunks.push(c); }
        await client.send(new PutObjectCommand({ Bucket: opt.bucket, Key: opt.object,
                                                 Body: Buffer.concat(chunks), ContentType: opt.type }));
    } else {
        throw new Error(`s3-sdk: no command "${cmd}"`);
    }
}

main().catch(err => { console.error(`s3-sdk: ${err.name}: ${err.message}`); process.exit(1); });
