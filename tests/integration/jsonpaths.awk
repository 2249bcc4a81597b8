# jsonpaths.awk - flattens a JSON document into one line per scalar,
# "path<TAB>value": object members as a.b.c, array elements as a.b[] (the
# index is dropped so a test can grep for membership). Strings are printed
# without quotes and with \" and \\ unescaped. POSIX awk only.
function emit(v,   p) {
    p = path[depth]
    if (kind[depth] == "a") p = p "[]"
    else if (kind[depth] == "o") p = (p == "" ? key : p "." key)
    printf "%s\t%s\n", p, v
}
function child(   p) {
    p = path[depth]
    if (kind[depth] == "a") return p "[]"
    if (kind[depth] == "o") return (p == "" ? key : p "." key)
    return p
}
{ doc = doc $0 "\n" }
END {
    depth = 0; kind[0] = ""; path[0] = ""; key = ""; expect_key = 0
    n = length(doc); i = 1
    while (i <= n) {
        c = substr(doc, i, 1)
        if (c == " " || c == "\t" || c == "\n" || c == "\r" || c == "," ) {
            if (c == "," && kind[depth] == "o") expect_key = 1
            i++; continue
        }
        if (c == "{" || c == "[") {
            p = child(); depth++; path[depth] = p
            kind[depth] = (c == "{" ? "o" : "a"); expect_key = (c == "{"); i++; continue
        }
        if (c == "}" || c == "]") { depth--; expect_key = 0; i++; continue }
        if (c == ":") { expect_key = 0; i++; continue }
        if (c == "\"") {
            s = ""; i++
            while (i <= n) {
                c = substr(doc, i, 1)
                if (c == "\\") { s = s substr(doc, i + 1, 1); i += 2; continue }
                if (c == "\"") break
                s = s c; i++
            }
            i++
            if (kind[depth] == "o" && expect_key) { key = s; continue }
            emit(s); continue
        }
        # number, true, false, null
        s = ""
        while (i <= n) {
            c = substr(doc, i, 1)
            if (c == "," || c == "}" || c == "]" || c == " " || c == "\n" || c == "\t" || c == "\r") break
            s = s c; i++
        }
        emit(s)
    }
}
