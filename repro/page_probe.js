(async () => {
  const MIN_PT = 9;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await Promise.race([MathJax.startup.promise, new Promise(r => setTimeout(r, 30000))]);
  }
  await document.fonts.ready;
  await Promise.all([...document.images].map(i => i.complete ? 0 :
    new Promise(r => { i.onload = i.onerror = r; })));
  const art = document.querySelector("article.bd-article") || document.querySelector("main");
  if (!art) return [{kind: "no-article", detail: "no article element"}];
  // what a reader can unfold (hidden code, collapsed tables) is measured unfolded
  for (const d of art.querySelectorAll("details")) d.open = true;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const cs = getComputedStyle(art), box = art.getBoundingClientRect();
  const right = box.right - parseFloat(cs.paddingRight);
  const out = [];
  const name = el => {
    const sec = el.closest("section[id]");
    const text = (el.innerText || el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 60);
    const tag = el.tagName.toLowerCase() + (el.className && typeof el.className === "string"
      ? "." + el.className.trim().split(/\s+/).slice(0, 2).join(".") : "");
    return `${tag} in #${sec ? sec.id : "?"}: ${text}`;
  };
  const reported = new Set();
  const under = el => { for (let a = el.parentElement; a && a !== art; a = a.parentElement)
    if (reported.has(a)) return true; return false; };
  for (const el of art.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    // MathJax's hidden copy for screen readers is clipped to nothing
    if (r.width === 0 || r.height === 0 || under(el) || el.closest("mjx-assistive-mml")) continue;
    const s = getComputedStyle(el);
    if (s.visibility === "hidden") continue;
    if (r.right > right + 1) {
      reported.add(el);
      out.push({kind: "overflow", detail: `${Math.round(r.right - right)} px beyond the column: ${name(el)}`});
      continue;
    }
    if (!["auto", "scroll", "hidden", "clip"].includes(s.overflowX) || el.clientWidth === 0) continue;
    // inside a formula only MathJax's container counts (stretchy delimiters clip on purpose)
    if (el.tagName !== "MJX-CONTAINER" && el.parentElement.closest("mjx-container")) continue;
    // MathJax's glyphs reach a few pixels past their boxes (scrollWidth counts it, nothing is
    // cut): a formula's box is its width, or for a tagged one the min-width MathJax gives it
    const math = el.matches("div.math, span.math, mjx-container") ? el.querySelector("mjx-math") : null;
    let content = el.scrollWidth;
    if (math) {
      const tagged = math.querySelector("mjx-labels") && math.querySelector("mjx-mtable");
      content = tagged ? parseFloat(getComputedStyle(tagged).minWidth) || 0
        : math.getBoundingClientRect().width;
    }
    if (content > el.clientWidth + 1) {
      reported.add(el);
      out.push({kind: "scroll", detail: `content ${Math.round(content)} px in a ${el.clientWidth} px box: ${name(el)}`});
    }
  }
  // the code and output boxes hold 80 monospace characters at no less than 9 pt (book/_static/dpdro.css)
  const pre = art.querySelector("div.highlight pre");
  if (pre) {
    const ps = getComputedStyle(pre), probe = document.createElement("span");
    probe.textContent = "0".repeat(80);
    probe.style.whiteSpace = "pre";
    pre.appendChild(probe);
    const need = probe.getBoundingClientRect().width;
    probe.remove();
    const room = pre.clientWidth - parseFloat(ps.paddingLeft) - parseFloat(ps.paddingRight);
    if (need > room + 0.5 || parseFloat(ps.fontSize) < MIN_PT * 4 / 3 - 0.01) {
      out.push({kind: "code-box", detail: `80 characters take ${need.toFixed(0)} px of ` +
        `${room.toFixed(0)} px at ${ps.fontSize}`});
    }
  }
  for (const img of art.querySelectorAll("img")) {
    if (img.naturalWidth > 0 && img.clientWidth > 0 && img.clientWidth < img.naturalWidth - 1) {
      const scale = img.clientWidth / img.naturalWidth;
      out.push({kind: "shrunk-image", detail: `${img.getAttribute("src").split("/").pop()}: ` +
        `${img.naturalWidth} px shown at ${img.clientWidth} px, 9 pt text appears at ` +
        `${(MIN_PT * scale).toFixed(1)} pt`});
    }
  }
  for (const err of art.querySelectorAll("mjx-merror")) {
    out.push({kind: "tex-error", detail: `MathJax: ${(err.textContent || "").slice(0, 80)} in ${name(err.closest(".math") || err)}`});
  }
  const skip = "pre, code, script, style, textarea, mjx-container, .MathJax, .math, kbd";
  const walker = document.createTreeWalker(art, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest(skip) || !p.getClientRects().length) continue;
    const m = n.textContent.match(/\$|\\[A-Za-z]+|\\[()\[\]]/);
    if (m) {
      const i = m.index, t = n.textContent;
      out.push({kind: "raw-tex", detail: `"${t.slice(Math.max(0, i - 30), i + 30).replace(/\s+/g, " ")}"`});
    }
  }
  for (const td of art.querySelectorAll("td")) {
    if (!td.getClientRects().length) continue;
    const visible = (td.innerText || "").trim() !== "" || td.querySelector("img, svg, mjx-container");
    const icon = [td, ...td.querySelectorAll("*")].some(e =>
      /font awesome/i.test(getComputedStyle(e).fontFamily) && (e.textContent || "").trim());
    if (!visible || icon) {
      const row = td.closest("tr"), table = td.closest("table");
      const cap = table && table.querySelector("caption");
      out.push({kind: "empty-cell", detail: `row ${row ? row.rowIndex : "?"}, column ${td.cellIndex}` +
        `${icon ? " (text in an icon font)" : ""} of ${cap ? cap.innerText.slice(0, 50) : name(table || td)}`});
    }
  }
  return out;
})()
