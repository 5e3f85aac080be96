/**
 * The inline stylesheet of the HTML export: a column as wide as the window allows (up to
 * 1600 px, for diffs and output), light and dark by the reader's preference, prints plainly.
 */
export const EXPORT_CSS = `
:root{--bg:#f7f7f8;--fg:#1b1b1f;--dim:#6b6b76;--line:#e2e2e8;--card:#fff;--user:#eef4ff;--userline:#c9dbf7;
--code:#f3f3f6;--add:#e7f7ea;--addfg:#116329;--del:#fdecec;--delfg:#a11;--ok:#0a7a3b;--no:#b3261e;--accent:#2f5fd0}
@media (prefers-color-scheme:dark){:root{--bg:#16161a;--fg:#e6e6ea;--dim:#9a9aa6;--line:#2c2c34;--card:#1d1d23;
--user:#1c2740;--userline:#2c3d63;--code:#24242b;--add:#15301d;--addfg:#7ee29a;--del:#3a1b1b;--delfg:#ff8f8f;--ok:#5fd68f;--no:#ff7b72;--accent:#8fb0ff}}
*{box-sizing:border-box}
body{font:15px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:var(--fg);background:var(--bg)}
main{width:100%;max-width:1600px;margin:0 auto;padding:1.5em clamp(.8em,3vw,3em) 4em}
h1{font-size:1.35em;margin:.2em 0}
.meta{color:var(--dim);font-size:.85em;margin-bottom:1em;word-break:break-all}
.totals{display:flex;flex-wrap:wrap;gap:.5em 1.8em;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.7em 1em;margin:0 0 1.5em}
.totals div{display:flex;flex-direction:column}.totals b{font-size:1.15em}.totals span{color:var(--dim);font-size:.8em}
.msg{border-radius:10px;padding:.7em 1em;margin:.9em 0;background:var(--card);border:1px solid var(--line)}
.user{background:var(--user);border-color:var(--userline)}
.system,.developer{color:var(--dim)}
.who{font-size:.72em;text-transform:uppercase;letter-spacing:.06em;color:var(--dim);margin-bottom:.35em}
.text{white-space:pre-wrap}
.reasoning{color:var(--dim);font-style:italic;margin:.3em 0 .6em;border-left:3px solid var(--line);padding-left:.7em}
.reasoning summary{cursor:pointer;font-style:normal;font-size:.85em}
.reasoning div{white-space:pre-wrap}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:.6em .8em;overflow-x:auto}
.md code{font:.88em/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:.1em .3em;border-radius:4px}
.md pre code{background:none;padding:0}
.md table{border-collapse:collapse;margin:.6em 0}.md th,.md td{border:1px solid var(--line);padding:.3em .6em;text-align:left}
.md blockquote{margin:.5em 0;padding-left:.8em;border-left:3px solid var(--line);color:var(--dim)}
.md a{color:var(--accent)}
.img{color:var(--dim);font-style:italic}
img{max-width:100%;border-radius:6px;margin:.3em 0}
.call{border:1px solid var(--line);border-radius:8px;margin:.7em 0;background:var(--bg);overflow:hidden}
.call-head{padding:.4em .8em;font-size:.9em;border-bottom:1px solid var(--line);display:flex;gap:.6em;align-items:baseline;flex-wrap:wrap}
.call-head code{font:.95em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.tool{font:600 .95em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--accent)}
.call.failed .tool{color:var(--no)}
.args{color:var(--dim);font:.85em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
details.args{padding:.2em .8em}
.tag{font-size:.75em;border:1px solid var(--line);border-radius:999px;padding:0 .5em;color:var(--dim)}
.stat .plus{color:var(--addfg)}.stat .minus{color:var(--delfg)}.stat{font:.85em ui-monospace,monospace}
pre{font:.85em/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word;margin:0;padding:.5em .8em}
pre.cmd{background:var(--code)}.prompt{color:var(--dim);user-select:none}
.result{border-top:1px solid var(--line)}.result>pre{max-height:32em;overflow:auto}
.result summary{cursor:pointer;padding:.35em .8em;font-size:.85em;color:var(--dim)}
.result .status{font-size:.85em;padding:.3em .8em 0;display:block;color:var(--ok)}
.result .status+pre{padding-top:.15em}
details.result .status{padding:0;display:inline}
.result.error .status{color:var(--no);font-weight:600;display:inline-block}.result.error pre{color:var(--no)}
.result.pending{padding:.35em .8em;color:var(--dim);font-size:.85em}
table.diff{border-collapse:collapse;width:100%;font:.84em/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table.diff td{padding:0 .6em;white-space:pre-wrap;word-break:break-word;vertical-align:top}
table.diff td.sign{width:1.6em;text-align:center;color:var(--dim);user-select:none}
tr.add{background:var(--add)}tr.add td{color:var(--addfg)}tr.del{background:var(--del)}tr.del td{color:var(--delfg)}
tr.gap td{color:var(--dim);background:var(--code)}
.approval{font-size:.88em;padding:.4em .8em;border-bottom:1px solid var(--line)}
.approval .q{color:var(--dim)}.approval.ok .a{color:var(--ok)}.approval.no .a{color:var(--no)}
.todos{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.5em .9em;margin:.6em 0}
.call .todos{border:0;border-radius:0;margin:0}
.todos ul{list-style:none;margin:.2em 0;padding:0}.todo .mark{display:inline-block;width:1.3em}
.todo.completed{color:var(--dim);text-decoration:line-through}.todo.cancelled{color:var(--dim);text-decoration:line-through}
.todo.in_progress{font-weight:600}
.event{color:var(--dim);font-size:.85em;margin:.6em 0;padding-left:.9em;border-left:3px solid var(--line)}
.event.policy{border-left-color:var(--accent);color:var(--fg)}
.turn-end{color:var(--dim);font-size:.8em;text-align:center;margin:1.2em 0;display:flex;gap:.8em;align-items:center}
.turn-end::before,.turn-end::after{content:"";flex:1;border-top:1px solid var(--line)}
.turn-end.bad{color:var(--no)}
.note{color:#a15c00;font-size:.85em}
.subagent{margin:.6em 0;font-size:.9em;padding-left:.9em;border-left:3px solid var(--accent)}
.child{border-top:2px solid var(--line);margin-top:2.5em;padding-top:.5em}h2{font-size:1.1em}
@media print{body{background:#fff}main{max-width:none}details{display:block}}
`
