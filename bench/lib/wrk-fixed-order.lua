-- Request headers in a fixed order for bench/lib/measure.ts wrk(): Host first, then the others
-- sorted by name, as Go's net/http writes them. Stock wrk walks a Lua table, whose order changes
-- from one wrk process to the next.
wrk.format = function(method, path, headers, body)
  method = method or wrk.method
  path = path or wrk.path
  headers = headers or wrk.headers
  local names = {}
  for name in pairs(headers) do
    if name ~= "Host" then names[#names + 1] = name end
  end
  table.sort(names)
  local lines = { string.format("%s %s HTTP/1.1", method, path), "Host: " .. headers["Host"] }
  for _, name in ipairs(names) do lines[#lines + 1] = name .. ": " .. headers[name] end
  if body then lines[#lines + 1] = "Content-Length: " .. string.len(body) end
  return table.concat(lines, "\r\n") .. "\r\n\r\n" .. (body or "")
end
