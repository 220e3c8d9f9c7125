#!/usr/bin/env node
// An S3-compatible server for the tests (t/lib/Cms/S3.pm starts it on loopback): npm's
// s3rver stores the objects, and this file puts in front of it what s3rver leaves out,
// a check of every request's AWS Signature Version 4, written from AWS's description
// independently of the module's (src/lib/cms_sigv4.c), so that the two meet only on
// the wire: a header signature (Authorization) or a presigned URL (X-Amz-Signature),
// the key id, region, service and date checked, the time within 15 minutes (or the
// presigned URL's lifetime), anonymous requests refused (a private bucket); and
// AbortMultipartUpload, which s3rver lacks. Each
// request is appended to --log as a JSON line (method, path, query, the signed
// payload hash, status) for the tests to read.
//
//   node s3-server.js --dir D --port P --bucket B --key K --secret S [--region R] [--log F]
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const S3rver = require('s3rver');
const AWSAccount = require('s3rver/lib/models/account');

// s3rver makes ListObjectsV2's continuation tokens with DES, which OpenSSL 3 keeps in its
// legacy provider: the same tokens from AES-128-CBC (key and IV doubled), so a listing's
// second page works
for (const name of ['createCipheriv', 'createDecipheriv']) {
    const make = crypto[name];
    crypto[name] = (alg, key, iv, ...rest) => (alg === 'des'
        ? make('aes-128-cbc', Buffer.concat([key, key]), Buffer.concat([iv, iv]), ...rest)
        : make(alg, key, iv, ...rest));
}

const opt = { region: 'us-east-1' };
for (let i = 2; i < process.argv.length; i += 2) {
    opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
}
for (const k of ['dir', 'port', 'bucket', 'key', 'secret']) {
    if (!opt[k]) { console.error(`s3-server: --${k} is required`); process.exit(2); }
}

const hmac = (key, s) => crypto.createHmac('sha256', key).update(s).digest();
const sha256 = s => crypto.createHash('sha256').update(s).digest('hex');

// RFC 3986: every byte but A-Z a-z 0-9 - . _ ~ as %XX (upper case)
function enc(s, keepSlash) {
    let out = '';
    for (const b of Buffer.from(s, 'utf8')) {
        const c = String.fromCharCode(b);
        if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/')) { out += c; }
        else { out += '%' + b.toString(16).toUpperCase().padStart(2, '0'); }
    }
    return out;
}
const dec = s => decodeURIComponent(s.replace(/\+/g, '%20'));

function canonicalQuery(raw, drop) {
    const pairs = [];
    for (const part of raw.split('&')) {
        if (part === '') { continue; }
        const eq = part.indexOf('=');
        const name = dec(eq < 0 ? part : part.slice(0, eq));
        const value = eq < 0 ? '' : dec(part.slice(eq + 1));
        if (name === drop) { continue; }
        pairs.push([enc(name), enc(value)]);
    }
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    return pairs.map(p => `${p[0]}=${p[1]}`).join('&');
}

class Refused extends Error {
    constructor(code, message) { super(message); this.code = code; }
}

// the signature's parts, from the Authorization header or the query
function parse(req, query) {
    const auth = req.headers.authorization;
    if (auth) {
        const m = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
        if (!m) { throw new Refused('AccessDenied', 'not a SigV4 Authorization header'); }
        return { credential: m[1], signed: m[2], signature: m[3], date: req.headers['x-amz-date'],
                 payload: req.headers['x-amz-content-sha256'], expires: null, drop: null };
    }
    if (query['X-Amz-Signature']) {
        if (query['X-Amz-Algorithm'] !== 'AWS4-HMAC-SHA256') { throw new Refused('AccessDenied', 'algorithm'); }
        return { credential: query['X-Amz-Credential'], signed: query['X-Amz-SignedHeaders'],
                 signature: query['X-Amz-Signature'], date: query['X-Amz-Date'], payload: 'UNSIGNED-PAYLOAD',
                 expires: Number(query['X-Amz-Expires']), drop: 'X-Amz-Signature' };
    }
    throw new Refused('AccessDenied', 'Access Denied (no signature: the bucket is private)');
}

function verify(req) {
    const url = req.url;
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    const query = {};
    for (const part of rawQuery.split('&')) {
        if (!part) { continue; }
        const eq = part.indexOf('=');
        query[dec(eq < 0 ? part : part.slice(0, eq))] = eq < 0 ? '' : dec(part.slice(eq + 1));
    }
    const s = parse(req, query);
    const [keyId, day, region, service, term] = (s.credential || '').split('/');
    if (keyId !== opt.key) { throw new Refused('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'); }
    if (region !== opt.region || service !== 's3' || term !== 'aws4_request') {
        throw new Refused('AuthorizationHeaderMalformed', `the scope ${s.credential} is not ${opt.region}/s3`);
    }
    const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(s.date || '');
    if (!m || m[1] + m[2] + m[3] !== day) { throw new Refused('AccessDenied', 'x-amz-date missing or not the scope\'s day'); }
    const t = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
    if (s.expires !== null) {
        if (!(s.expires >= 1 && s.expires <= 604800) || Date.now() > t + s.expires * 1000) {
            throw new Refused('AccessDenied', 'Request has expired');
        }
    } else if (Math.abs(Date.now() - t) > 15 * 60 * 1000) {
        throw new Refused('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
    }
    if (!s.payload) { throw new Refused('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256'); }
    const names = s.signed.split(';');
    if (!names.includes('host')) { throw new Refused('AccessDenied', 'host is not signed'); }
    const headers = names.map(n => {
        const v = req.headers[n];
        if (v === undefined) { throw new Refused('AccessDenied', `signed header ${n} missing`); }
        return `${n}:${String(v).trim().replace(/\s+/g, ' ')}\n`;
    }).join('');
    const path = rawPath.split('/').map(seg => enc(dec(seg))).join('/');
    const creq = [req.method, path, canonicalQuery(rawQuery, s.drop), headers, s.signed, s.payload].join('\n');
    const sts = ['AWS4-HMAC-SHA256', s.date, `${day}/${region}/s3/aws4_request`, sha256(creq)].join('\n');
    const key = hmac(hmac(hmac(hmac('AWS4' + opt.secret, day), region), 's3'), 'aws4_request');
    const want = hmac(key, sts).toString('hex');
    if (want !== s.signature) {
        throw new Refused('SignatureDoesNotMatch',
            'The request signature we calculated does not match the signature you provided. Check your key and signing method.');
    }
    return { rawPath, rawQuery, payload: s.payload };
}

// s3rver's own account takes the key (its check of SigV4 is this file's)
AWSAccount.DUMMY_ACCOUNT.createKeyPair(opt.key, opt.secret);

const log = opt.log ? fs.openSync(opt.log, 'a') : null;
const server = new S3rver({
    address: '127.0.0.1', port: Number(opt.port), directory: opt.dir, silent: true,
    configureBuckets: [{ name: opt.bucket }],
});

const xml = (code, message) => '<?xml version="1.0" encoding="UTF-8"?>\n'
    + `<Error><Code>${code}</Code><Message>${message.replace(/[<>&]/g, '')}</Message></Error>`;

// a test's faults: while <dir>.refuse-part holds N, part N of every multipart upload is
// answered 500 (the bucket failing halfway); while <dir>.refuse-delete exists, every
// object's DELETE is
function refused(ctx) {
    if (ctx.method === 'DELETE') { return fs.existsSync(`${opt.dir}.refuse-delete`); }
    const f = `${opt.dir}.refuse-part`;
    if (ctx.method !== 'PUT' || !fs.existsSync(f)) { return false; }
    const n = fs.readFileSync(f, 'utf8').trim();
    return new URLSearchParams(ctx.url.split('?')[1] || '').get('partNumber') === n;
}

// first of all: s3rver's own stack only sees signed requests
server.middleware.unshift(async (ctx, next) => {
    const entry = { method: ctx.method, url: ctx.url };
    try {
        const v = verify(ctx.req);
        entry.payload = v.payload;
        const abort = ctx.method === 'DELETE' && /[?&]uploadId=/.test(ctx.url);
        if (abort) {
            // AbortMultipartUpload, which s3rver lacks: the upload's parts removed
            const id = new URLSearchParams(ctx.url.split('?')[1]).get('uploadId');
            const dir = `${server.store.getResourcePath(opt.bucket, undefined, 'uploads')}/${id}`;
            if (!/^[A-Za-z0-9._-]+$/.test(id) || !fs.existsSync(dir)) {
                ctx.status = 404;
                ctx.type = 'application/xml';
                ctx.body = xml('NoSuchUpload', 'The specified upload does not exist.');
            } else {
                fs.rmSync(dir, { recursive: true, force: true });
                ctx.status = 204;
            }
        } else if (refused(ctx)) {
            ctx.status = 500;
            ctx.type = 'application/xml';
            ctx.body = xml('InternalError', 'We encountered an internal error. Please try again.');
            entry.refused = 'InternalError';
        } else {
            await next();
        }
    } catch (e) {
        if (!(e instanceof Refused)) { throw e; }
        ctx.status = e.code === 'InvalidRequest' || e.code === 'AuthorizationHeaderMalformed' ? 400 : 403;
        ctx.type = 'application/xml';
        ctx.body = xml(e.code, e.message);
        entry.refused = e.code;
    }
    entry.status = ctx.status;
    if (log !== null) { fs.writeSync(log, JSON.stringify(entry) + '\n'); }
});

server.run().then(() => { console.log('ready'); }, err => { console.error(err); process.exit(1); });
process.on('SIGTERM', () => { server.close().then(() => process.exit(0)); });
