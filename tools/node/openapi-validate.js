#!/usr/bin/env node
// Checks HTTP answers against openapi/openapi.yaml: the co-process of the Perl suite's
// request helper (t/lib/Cms/OpenApi.pm), one per test file, started at its first answer.
//
//   node tools/node/openapi-validate.js DOC.json    (frames on stdin; t/006 tests it)
//
// DOC.json: openapi/openapi.yaml as JSON (the Perl side converts it with YAML::XS, which
// is ten times faster than a YAML parser in JavaScript).
//
// A frame on stdin is one answer:
//   "<id>\t<METHOD>\t<status>\t<path and query>\t<header bytes>\t<body bytes>\n"
//   then the header block ("name: value\n" lines) and the body, of those lengths.
// A frame "<id>\tSYNC\n" asks for "SYNC <id>\n" once every earlier frame is checked.
// Nothing is written for an answer that matches; one that does not gets one line,
// "FAIL <id>\t<JSON array of messages>\n".
//
// An answer matches when: its path is one of the document's path templates (else only
// the router's 404 not_found is allowed; a path outside /v1/ is a location of the test's
// own config, not checked) and its method an operation there (HEAD is the GET's; else
// only a 405 method_not_allowed with Allow: the error shapes' code, or type
// invalid_request under /v1/ext and /v1/extensions); its status is a response of the
// operation; its Content-Type (parameters aside) is a media type of that response, and
// an answer without a body has none documented (HEAD and 304 aside); a JSON body is
// valid against the media type's schema (ajv, OpenAPI 3.0 nullable); each documented
// response header that came is valid against its schema, and one documented as required
// came (WWW-Authenticate on a 401). Other bodies (the feed, the
// page, files) are checked for status and content type only.
'use strict';

const fs = require('fs');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');

function load(file) {
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, verbose: true,
                          inlineRefs: false });    // each shared schema compiled once: half the CPU
    addFormats(ajv);
    ajv.addFormat('int64', { type: 'number', validate: (n) => Number.isInteger(n) });
    ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) });
    ajv.addFormat('double', { type: 'number', validate: () => true });
    ajv.addFormat('float', { type: 'number', validate: () => true });
    ajv.addSchema(doc, 'doc');
    // templates: most literal segments first, so /a/b wins over /a/{id}; a path
    // parameter whose pattern takes "/" is the rest of the path (the router's *key)
    const restOfPath = (t, name) => Object.values(doc.paths[t]).some((op) =>
        ((op && op.parameters) || []).some((p) => p.in === 'path' && p.name === name
            && p.schema && /\//.test(p.schema.pattern || '')));
    const templates = Object.keys(doc.paths).map((t) => {
        const segs = t.split('/');
        const re = new RegExp('^' + segs.map((s) => (/^\{\w+\}$/.test(s)
            ? (restOfPath(t, s.slice(1, -1)) ? '.+' : '[^/]+')
            : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '$');
        return { t, re, score: segs.map((s) => (/^\{/.test(s) ? '0' : '1')).join('') };
    });
    templates.sort((a, b) => (a.score < b.score ? 1 : a.score > b.score ? -1 : 0));
    return { doc, ajv, templates, cache: new Map() };
}

// the object at a local $ref, and its JSON pointer
function deref(doc, obj, ptr) {
    const seen = new Set();
    while (obj && typeof obj.$ref === 'string' && obj.$ref.startsWith('#/')) {
        if (seen.has(obj.$ref)) break;
        seen.add(obj.$ref);
        ptr = obj.$ref.slice(1);
        obj = ptr.split('/').slice(1).reduce((o, k) => o && o[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    }
    return [obj, ptr];
}

function seg(s) {
    return encodeURIComponent(String(s).replace(/~/g, '~0').replace(/\//g, '~1'));
}

function validator(v, ptr) {
    let f = v.cache.get(ptr);
    if (!f) {
        f = v.ajv.compile({ $ref: 'doc#' + ptr });
        v.cache.set(ptr, f);
    }
    return f;
}

function ajvErrors(errors, where) {
    return (errors || []).slice(0, 8).map((e) => {
        let m = `${where}${e.instancePath || ''} ${e.message}`;
        if (e.keyword === 'enum') m += ' ' + JSON.stringify(e.params.allowedValues);
        if (['enum', 'type', 'format', 'pattern', 'maxLength', 'minLength', 'minimum', 'maximum'].includes(e.keyword)) {
            m += ', got ' + JSON.stringify(e.data).slice(0, 80);
        }
        if (e.keyword === 'additionalProperties') m += ': ' + e.params.additionalProperty;
        return m;
    });
}

function mediaType(ct) {
    return (ct || '').split(';')[0].trim().toLowerCase();
}

function isJson(mt) {
    return mt === 'application/json' || /\+json$/.test(mt);
}

// the checks of one answer: a list of messages, empty when it matches
function check(v, a) {
    const { doc } = v;
    const out = [];
    const path = a.path.split('?')[0];
    const mt = mediaType(a.headers['content-type']);
    let method = a.method.toLowerCase();
    const head = method === 'head';
    if (head) method = 'get';
    // the most literal template with this method (as the router walks its tables:
    // GET /videos/upload-credentials is GET /videos/{id}), else the most literal one
    const tpls = v.templates.filter((x) => x.re.test(path));
    const tpl = tpls.find((x) => doc.paths[x.t][method]) || tpls[0];
    const json = () => {
        try { return [JSON.parse(a.body.toString('utf8'))]; } catch (e) { return null; }
    };
    const errorShape = (code, type, where) => {
        // the router's own answers: {error, code} with this code, or (/v1/ext,
        // /v1/extensions) {error: {type, ...}} with this type
        const b = json();
        if (head && a.body.length === 0) return;
        if (!isJson(mt) || !b) { out.push(`${where}: expected a JSON error body, got ${mt || 'no content type'}`); return; }
        const body = b[0];
        if (validator(v, '/components/schemas/Error')(body)) {
            if (body.code !== code) out.push(`${where}: code ${body.code}, expected ${code}`);
        } else if (validator(v, '/components/schemas/ExtError')(body)) {
            if (body.error.type !== type) out.push(`${where}: type ${body.error.type}, expected ${type}`);
        } else {
            out.push(`${where}: the body is neither error shape: ${a.body.toString('utf8').slice(0, 200)}`);
        }
    };
    if (!tpl) {
        // a location of the test's own config, not the module's (which serves /v1/)
        if (!path.startsWith('/v1/')) return out;
        if (a.status === 404) errorShape('not_found', 'not_found', `${a.method} ${path} (no such path in the document) 404`);
        else out.push(`${a.method} ${path}: no path of the document matches it (answered ${a.status})`);
        return out;
    }
    const item = doc.paths[tpl.t];
    const op = item[method];
    const name = `${a.method} ${tpl.t} ${a.status}`;
    if (!op) {
        if (a.status === 405) {
            errorShape('method_not_allowed', 'invalid_request', name);
            if (!a.headers.allow) out.push(`${name}: no Allow header`);
        } else {
            out.push(`${a.method} ${tpl.t}: the document has no such operation (answered ${a.status})`);
        }
        return out;
    }
    const opPtr = `/paths/${seg(tpl.t)}/${method}`;
    let [resp, rptr] = [op.responses[String(a.status)], `${opPtr}/responses/${a.status}`];
    if (!resp && op.responses.default) [resp, rptr] = [op.responses.default, `${opPtr}/responses/default`];
    if (!resp) {
        out.push(`${name}: status ${a.status} is not a response of the operation `
                 + `(documented: ${Object.keys(op.responses).join(', ')})`);
        return out;
    }
    [resp, rptr] = deref(doc, resp, rptr);
    for (const [hname, h0] of Object.entries(resp.headers || {})) {
        const value = a.headers[hname.toLowerCase()];
        const [h, hptr] = deref(doc, h0, `${rptr}/headers/${seg(hname)}`);
        if (value === undefined) {
            if (h && h.required) out.push(`${name}: no ${hname} header, which the document requires`);
            continue;
        }
        if (!h || !h.schema) continue;
        let val = value;
        const type = deref(doc, h.schema, '')[0].type;
        if (type === 'integer' || type === 'number') val = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
        const f = validator(v, `${hptr}/schema`);
        if (!f(val)) out.push(...ajvErrors(f.errors, `${name} header ${hname}: ${JSON.stringify(value)}`));
    }
    const content = resp.content || {};
    const types = Object.keys(content);
    if (a.body.length === 0 && !mt) {
        if (types.length && !head && a.status !== 304) out.push(`${name}: no body, the document gives ${types.join(', ')}`);
        return out;
    }
    if (!types.length) {
        if (a.body.length) out.push(`${name}: a body (${mt || 'no content type'}), the document gives none`);
        return out;
    }
    // an exact type first, then a range the document gives (image/*, */*)
    const key = types.find((t) => t.toLowerCase() === mt)
        || types.find((t) => t === '*/*' || (t.endsWith('/*') && mt
            && mt.startsWith(t.toLowerCase().slice(0, -1))));
    if (!key) {
        out.push(`${name}: Content-Type ${mt || '(none)'} is not documented (${types.join(', ')})`);
        return out;
    }
    if (key.includes('*') || !isJson(mt) || (head && a.body.length === 0)) return out;
    const b = json();
    if (!b) { out.push(`${name}: the body is not JSON: ${a.body.toString('utf8').slice(0, 120)}`); return out; }
    if (!content[key].schema) return out;
    const f = validator(v, `${rptr}/content/${seg(key)}/schema`);
    if (!f(b[0])) out.push(...ajvErrors(f.errors, `${name} body`));
    return out;
}

function parseHeaders(buf) {
    const h = {};
    for (const line of buf.toString('latin1').split('\n')) {
        const i = line.indexOf(':');
        if (i <= 0) continue;
        const k = line.slice(0, i).trim().toLowerCase();
        const val = line.slice(i + 1).trim();
        h[k] = k in h ? `${h[k]}, ${val}` : val;
    }
    return h;
}

function serve(v) {
    let buf = Buffer.alloc(0);
    let want = null;    // the frame whose header block and body are awaited
    const write = (s) => process.stdout.write(s);
    process.stdin.on('data', (chunk) => {
        buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
        for (;;) {
            if (!want) {
                const nl = buf.indexOf(10);
                if (nl < 0) return;
                const f = buf.slice(0, nl).toString('utf8').split('\t');
                buf = buf.slice(nl + 1);
                if (f[1] === 'SYNC') { write(`SYNC ${f[0]}\n`); continue; }
                want = { id: f[0], method: f[1], status: Number(f[2]), path: f[3], hl: Number(f[4]), bl: Number(f[5]) };
            }
            if (buf.length < want.hl + want.bl) return;
            const a = want;
            a.headers = parseHeaders(buf.slice(0, a.hl));
            a.body = buf.slice(a.hl, a.hl + a.bl);
            buf = buf.slice(a.hl + a.bl);
            want = null;
            let msgs;
            try { msgs = check(v, a); } catch (e) { msgs = [`${a.method} ${a.path}: the validator failed: ${e.stack}`]; }
            if (msgs.length) write(`FAIL ${a.id}\t${JSON.stringify(msgs)}\n`);
        }
    });
    process.stdin.on('end', () => process.exit(0));
}

const args = process.argv.slice(2);
if (args.length === 1) serve(load(args[0]));
else { console.error('usage: openapi-validate.js openapi.json'); process.exit(2); }
