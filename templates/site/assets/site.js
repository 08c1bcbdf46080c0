/* triagebot's dashboard: sorts and filters the tables the pages already hold, draws the charts
 * from the JSON blocks beside them (Chart.js), and compares two nightlies from their data files.
 * Every page reads without it; it never fetches anything from another site. */
(function () {
  "use strict";

  /* Colours that mean something, the same on every page: crashes red, models helped green.
   * The palette for the other series leaves red and green out, so that no line reads as either. */
  var KINDS = { crash: "#cf222e", helped: "#1a7f37", flaky: "#bc4c00", wrong: "#8250df" };
  var PALETTE = ["#0969da", "#6e7781", "#bf8700", "#8c564b", "#e377c2", "#17becf", "#4b3f72", "#bcbd22"];
  var DASHES = [[], [8, 4], [3, 3], [12, 3, 3, 3]];

  function plural(count, word, words) {
    return count + " " + (count === 1 ? word : (words || word + "s"));
  }

  /* --- charts -------------------------------------------------------------------------------- */

  function bySeries(a, b) { return a.datasetIndex - b.datasetIndex; }

  function drawCharts() {
    var canvases = document.querySelectorAll("canvas[data-chart]");
    if (!canvases.length) { return; }
    if (typeof Chart === "undefined") {
      canvases.forEach(function (canvas) {
        canvas.parentNode.appendChild(document.createTextNode("The chart library did not load."));
      });
      return;
    }
    canvases.forEach(function (canvas) {
      var spec = JSON.parse(document.getElementById(canvas.dataset.chart).textContent);
      var kindsSeen = {};
      var plain = 0;
      var datasets = spec.series.map(function (entry, index) {
        var kind = entry[2];
        var colour = kind && KINDS[kind] ? KINDS[kind] : PALETTE[plain++ % PALETTE.length];
        /* Series of one kind (each flag's crashes) share its colour, told apart by their dashes. */
        var repeat = kind ? (kindsSeen[kind] = (kindsSeen[kind] || 0) + 1) - 1 : index;
        return {
          label: entry[0], data: entry[1], borderColor: colour, backgroundColor: colour,
          /* Lines that coincide stay told apart: later ones dashed, earlier points larger and
           * drawn first (Chart.js draws the lowest `order` last, on top), so that a later, smaller
           * point (a wrong result) shows on an earlier, larger one (a crash) at the same value. */
          borderWidth: 2, borderDash: DASHES[repeat % DASHES.length],
          pointRadius: spec.labels.length > 40 ? 0 : Math.max(2, 5 - index), pointHoverRadius: 5,
          order: spec.series.length - index, spanGaps: false, tension: 0
        };
      });
      var chart = new Chart(canvas, {
        type: spec.type || "line",
        data: { labels: spec.labels, datasets: datasets },
        options: {
          animation: false,
          responsive: true,
          maintainAspectRatio: false,
          interaction: { mode: "index", intersect: false },
          plugins: {
            /* `order` sorts the legend and the tooltip too: they keep the series' own order. */
            legend: { display: true, position: "bottom", labels: { usePointStyle: true, sort: bySeries } },
            tooltip: { enabled: true, itemSort: bySeries }
          },
          scales: {
            x: { title: { display: true, text: spec.x }, ticks: { autoSkip: true, maxRotation: 50, minRotation: 0 } },
            y: { title: { display: true, text: spec.y }, beginAtZero: true, ticks: { precision: 0 } }
          }
        }
      });
      canvas.dataset.drawn = chart.data.datasets.length ? "true" : "empty";
    });
  }

  /* --- sorting -------------------------------------------------------------------------------- */

  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) { return numeric ? null : ""; }
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
    if (!numeric) { return raw.toLowerCase(); }
    if (raw === "") { return null; }
    var number = parseFloat(raw);
    return isNaN(number) ? null : number;
  }

  function sortTable(table, header, index) {
    var numeric = header.dataset.type === "number";
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, position) { row.dataset.position = position; });
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (x === y) { return a.dataset.position - b.dataset.position; }
      if (x === null) { return 1; }  /* blanks last, either way */
      if (y === null) { return -1; }
      var order = x < y ? -1 : 1;
      return ascending ? order : -order;
    });
    var fragment = document.createDocumentFragment();
    rows.forEach(function (row) { fragment.appendChild(row); });
    body.appendChild(fragment);
    table.querySelectorAll("thead th").forEach(function (other) { other.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }

  function makeSortable(table) {
    var headers = table.tHead ? table.tHead.rows[table.tHead.rows.length - 1].cells : [];
    Array.prototype.forEach.call(headers, function (header, index) {
      header.tabIndex = 0;
      header.classList.add("sort");
      header.title = "Sort by this column";
      var go = function () { sortTable(table, header, index); };
      header.addEventListener("click", go);
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); go(); }
      });
    });
  }

  /* --- filtering ------------------------------------------------------------------------------ */

  function makeFilter(form) {
    var table = document.getElementById(form.dataset.table);
    if (!table) { return; }
    var fields = form.querySelectorAll("[data-column]");
    var count = form.querySelector("output");
    var rows = table.tBodies[0].rows;
    var apply = function () {
      var shown = 0;
      Array.prototype.forEach.call(rows, function (row) {
        var keep = Array.prototype.every.call(fields, function (field) {
          var wanted = field.value.trim();
          if (!wanted) { return true; }
          var value = row.dataset[field.dataset.column] || "";
          if (field.tagName === "SELECT") {
            return value === wanted || value.split(" ").indexOf(wanted) !== -1;
          }
          return value.toLowerCase().indexOf(wanted.toLowerCase()) !== -1;
        });
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      if (count) { count.textContent = shown + " of " + rows.length + " rows"; }
    };
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    form.addEventListener("submit", function (event) { event.preventDefault(); apply(); });
    apply();
  }

  /* --- compare any two nightlies ------------------------------------------------------------- */
  /* The same rules as triagebot's own diff (analysis/diff.py), on the compact data files. */

  var loaded = {};
  var waiting = {};
  window.triagebotNight = function (data) {
    loaded[data.key] = data;
    (waiting[data.key] || []).forEach(function (done) { done(data); });
    delete waiting[data.key];
  };

  function loadNight(night) {
    return new Promise(function (resolve, reject) {
      if (loaded[night.key]) { resolve(loaded[night.key]); return; }
      (waiting[night.key] = waiting[night.key] || []).push(resolve);
      var script = document.createElement("script");
      script.src = night.data;
      script.onerror = function () { reject(new Error("cannot load " + night.data)); };
      document.head.appendChild(script);
    });
  }

  /* A data file keeps each model and each of its runs as an array (`ModelNight`, `Run` in
   * analysis/compact.py); the page's settings name their fields in order (`fields`). */
  function named(names, values) {
    var record = {};
    names.forEach(function (name, i) { record[name] = values[i]; });
    return record;
  }

  function indexNight(data, settings) {
    var configs = [settings.baseline].concat(Object.keys(data.flags));
    var models = {}, order = [];
    data.models.forEach(function (values) {
      var row = named(settings.fields.model, values), runs = {}, effects = {};
      configs.forEach(function (config, i) {
        var run = row.runs[i];
        runs[config] = run ? named(settings.fields.run, run) : run;
      });
      Object.keys(data.flags).forEach(function (flag, i) { effects[flag] = row.effects[i]; });
      models[row.model] = { model: row.model, stratum: row.stratum, runs: runs, effects: effects };
      order.push(row.model);
    });
    return { data: data, order: order, models: models };
  }

  function signatureOf(night, run) {
    return run && run.signature !== null && run.signature !== undefined ? night.data.signatures[run.signature] : null;
  }

  function compareNights(oldData, newData, settings) {
    var before = indexNight(oldData, settings), after = indexNight(newData, settings);
    var ran = settings.ran, crash = settings.crash;
    var result = {
      added: [], removed: [], baseline: [], flags: {},
      oldGit: oldData.environment.torch_git_version, newGit: newData.environment.torch_git_version,
      oldTransformers: oldData.environment.transformers_version || "",
      newTransformers: newData.environment.transformers_version || ""
    };
    after.order.forEach(function (model) { if (!before.models[model]) { result.added.push(model); } });
    before.order.forEach(function (model) { if (!after.models[model]) { result.removed.push(model); } });
    var common = after.order.filter(function (model) { return before.models[model]; });
    var graphChange = function (model, config) {
      var a = before.models[model].runs[config], b = after.models[model].runs[config];
      if (!a || !b || a.status !== "ok" || b.status !== "ok" || a.graphs === b.graphs) { return null; }
      return { model: model, stratum: after.models[model].stratum, old: a.graphs, new: b.graphs };
    };
    common.forEach(function (model) {
      var change = graphChange(model, settings.baseline);
      if (change) { result.baseline.push(change); }
    });
    Object.keys(newData.flags).filter(function (flag) { return flag in oldData.flags; }).forEach(function (flag) {
      var moved = { newly_crashing: [], fixed: [], signature_changes: [], effect_changes: [], graph_changes: [] };
      common.forEach(function (model) {
        var old = before.models[model], now = after.models[model];
        var was = old.effects[flag], is = now.effects[flag];
        if (!was || !is) { return; }
        var row = {
          model: model, stratum: now.stratum, old: was, new: is,
          oldSignature: signatureOf(before, old.runs[flag]), newSignature: signatureOf(after, now.runs[flag])
        };
        if (is === crash && was !== crash) { moved.newly_crashing.push(row); }
        else if (was === crash && ran.indexOf(is) !== -1) { moved.fixed.push(row); }
        else if (was === crash && is === crash) {
          if (row.oldSignature !== row.newSignature) { moved.signature_changes.push(row); }
        } else if (was !== is) { moved.effect_changes.push(row); }
        var graphs = graphChange(model, flag);
        if (graphs) { moved.graph_changes.push(graphs); }
      });
      result.flags[flag] = moved;
    });
    return result;
  }

  function element(tag, text, attributes) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    return node;
  }

  function modelLink(settings, model) {
    var page = settings.modelPage[model];
    return page ? element("a", model, { href: page }) : element("span", model);
  }

  function changeTable(settings, rows, graphs) {
    var table = element("table", null, { "class": "sortable" });
    var head = table.createTHead().insertRow();
    var titles = graphs ? ["Model", "Stratum", "Graphs before", "Graphs now"]
      : ["Model", "Stratum", "Effect before", "Effect now", "Signature before", "Signature now"];
    titles.forEach(function (title, i) {
      var th = element("th", title);
      if (graphs && i > 1) { th.dataset.type = "number"; }
      head.appendChild(th);
    });
    var body = table.createTBody();
    rows.forEach(function (row) {
      var tr = body.insertRow();
      tr.insertCell().appendChild(modelLink(settings, row.model));
      tr.insertCell().textContent = row.stratum;
      var values = graphs ? [row.old, row.new] : [row.old, row.new, row.oldSignature || "", row.newSignature || ""];
      values.forEach(function (value, i) {
        var cell = tr.insertCell();
        cell.textContent = value === null ? "" : (!graphs && i < 2 && settings.effectWords[value]) || value;
        if (graphs) { cell.className = "n"; cell.dataset.value = value === null ? "" : value; }
        if (!graphs && i > 1 && value) { cell.textContent = ""; cell.appendChild(element("code", value)); }
      });
    });
    makeSortable(table);
    return table;
  }

  function showComparison(settings, oldKey, newKey, result) {
    var out = document.getElementById("compare-result");
    out.textContent = "";
    out.appendChild(element("h2", oldKey + " → " + newKey, { id: "compared" }));
    var range = element("p", null, { "class": "lede" });
    // As the pair pages say it (compare.html.j2): what moved between the two builds.
    var transformersMoved = result.oldTransformers && result.newTransformers &&
      result.oldTransformers !== result.newTransformers;
    var transformers = "transformers " + result.oldTransformers + " → " + result.newTransformers;
    if (result.oldGit && result.oldGit === result.newGit && !transformersMoved) {
      range.textContent = "Both nightlies are the same build (torch and transformers): nothing here is news.";
    } else if (result.oldGit && result.oldGit === result.newGit) {
      range.appendChild(document.createTextNode("The same torch build; only " + transformers + " ("));
      range.appendChild(element("a", "its changes", {
        href: settings.transformersCompareUrl.replace("{old}", result.oldTransformers).replace("{new}", result.newTransformers)
      }));
      range.appendChild(document.createTextNode("): what changed is the models' own code."));
    } else if (result.oldGit && result.newGit) {
      range.appendChild(document.createTextNode("Commit range: "));
      range.appendChild(element("a", result.oldGit.slice(0, 12) + "…" + result.newGit.slice(0, 12), {
        href: settings.compareUrl.replace("{old}", result.oldGit).replace("{new}", result.newGit)
      }));
      range.appendChild(document.createTextNode(transformersMoved ? "; and " + transformers + "." : "."));
    } else {
      range.textContent = "Commit range unknown: a snapshot lacks its torch git hash.";
    }
    out.appendChild(range);
    [[result.added, "joined the corpus", "models-added"], [result.removed, "left it", "models-removed"]].forEach(function (part) {
      if (!part[0].length) { return; }
      var line = element("p", plural(part[0].length, "model") + " " + part[1] + ": ", { id: part[2] });
      part[0].forEach(function (model, i) {
        if (i) { line.appendChild(document.createTextNode(", ")); }
        line.appendChild(modelLink(settings, model));
      });
      line.appendChild(document.createTextNode("."));
      out.appendChild(line);
    });
    out.appendChild(element("h3", "Baseline graph counts: " + plural(result.baseline.length, "change")));
    out.appendChild(changeTable(settings, result.baseline, true));
    Object.keys(result.flags).forEach(function (flag) {
      var moved = result.flags[flag];
      out.appendChild(element("h3", flag, { "class": "flag" }));
      [["Newly crashing", moved.newly_crashing, false], ["Fixed: crashed, runs now", moved.fixed, false],
        ["Crashing with another error", moved.signature_changes, false],
        ["Other effect changes", moved.effect_changes, false],
        ["Graphs under the flag", moved.graph_changes, true]].forEach(function (part) {
        out.appendChild(element("h4", part[0] + ": " + plural(part[1].length, "model")));
        if (part[1].length) { out.appendChild(changeTable(settings, part[1], part[2])); }
      });
    });
  }

  function setUpCompare() {
    var block = document.getElementById("compare-settings");
    if (!block) { return; }
    var settings = JSON.parse(block.textContent);
    var keys = settings.nights.map(function (night) { return night.key; });
    var form = document.getElementById("compare-form");
    var status = document.getElementById("compare-status");
    var pick = { old: document.getElementById("compare-old"), new: document.getElementById("compare-new") };
    /* The selection lives in the address (compare.html#old=KEY&new=KEY), so that an issue can
     * link to a comparison and a reader can pass it on. */
    var compare = function (a, b, replace) {
      if (a > b) { var swap = a; a = b; b = swap; }
      /* Two consecutive nightlies have their page, made by triagebot with the commit range. */
      if (b === a + 1 && settings.nights[b].page) {
        if (replace) { window.location.replace(settings.nights[b].page); } else { window.location.href = settings.nights[b].page; }
        return;
      }
      status.textContent = "Loading…";
      Promise.all([loadNight(settings.nights[a]), loadNight(settings.nights[b])]).then(function (both) {
        showComparison(settings, keys[a], keys[b], compareNights(both[0], both[1], settings));
        status.textContent = "";
      }, function (error) { status.textContent = error.message; });
    };
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var a = keys.indexOf(pick.old.value), b = keys.indexOf(pick.new.value);
      if (a === b) { status.textContent = "Pick two different nightlies."; return; }
      var chosen = "old=" + encodeURIComponent(keys[Math.min(a, b)]) + "&new=" + encodeURIComponent(keys[Math.max(a, b)]);
      if (window.location.hash !== "#" + chosen) { window.history.replaceState(null, "", "#" + chosen); }
      compare(a, b, false);
    });
    var fromAddress = function () {
      var wanted = {};
      window.location.hash.replace(/^#/, "").split("&").forEach(function (part) {
        var pair = part.split("=");
        if (pair.length === 2) { wanted[pair[0]] = decodeURIComponent(pair[1]); }
      });
      var a = keys.indexOf(wanted.old), b = keys.indexOf(wanted.new);
      if (a === -1 || b === -1) { return; }
      if (a === b) { status.textContent = "Pick two different nightlies."; return; }
      pick.old.value = keys[Math.min(a, b)];
      pick.new.value = keys[Math.max(a, b)];
      compare(a, b, true);
    };
    window.addEventListener("hashchange", fromAddress);
    fromAddress();
    window.triagebotSite = {
      settings: settings,
      load: function (key) { return loadNight(settings.nights[keys.indexOf(key)]); },
      compare: function (oldData, newData) { return compareNights(oldData, newData, settings); }
    };
  }

  /* --- the watchdog ------------------------------------------------------------------------- */

  /* A page built on the last night that ran cannot say that none ran since: the reader's clock
   * can. The rule is the tracker's (`silence_of`): `days` whole days or more without a nightly. */
  function showSilence(now) {
    var note = document.getElementById("silence");
    if (!note) { return; }
    var stored = Date.parse(note.dataset.stored);
    var limit = Number(note.dataset.days);
    var days = Math.floor((now - stored) / 86400000);
    if (isNaN(stored) || !(limit > 0) || days < limit) { return; }
    note.textContent = "No nightly stored for " + plural(days, "day") + " (over " + limit + "): the last is " +
      note.dataset.key + ", stored " + new Date(stored).toISOString().slice(0, 10) +
      "; the nightly workflow may be failing, and these pages show that nightly.";
    note.hidden = false;
  }

  function start() {
    showSilence(Date.now());
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    document.querySelectorAll("form.filters[data-table]").forEach(makeFilter);
    setUpCompare();
    drawCharts();
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
}());
