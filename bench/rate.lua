-- wrk at a constant rate (wrk2 is not in Debian): each request waits for its slot, the
-- slots of a thread 1/rate * threads apart, so that latency is measured at a load the
-- server keeps up with.  Arguments after "--": threads, rate (requests/s, all threads).
-- A slot missed is not made up by a burst: wrk's latency is from each request's send,
-- so a stall shows in the rate kept (printed) rather than in the percentiles.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_usec; } cms_bench_timeval;
int gettimeofday(cms_bench_timeval *tv, void *tz);
]]
local tv = ffi.new("cms_bench_timeval")
local interval, slot

local function now_ms()
    ffi.C.gettimeofday(tv, nil)
    return tonumber(tv.tv_sec) * 1000 + tonumber(tv.tv_usec) / 1000
end

function init(args)
    interval = 1000 * tonumber(args[1]) / tonumber(args[2])
    slot = now_ms()
end

function delay()
    local t = now_ms()
    if slot < t then
        slot = t
    end
    slot = slot + interval
    return math.floor(slot - t)
end
