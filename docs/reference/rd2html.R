# Renders the R package's Rd pages (bindings/r/man) to HTML with an index of their titles.
#   Rscript rd2html.R MAN_DIR OUT_DIR
# Every warning of the Rd parser or renderer goes to stderr, which scripts/docs.sh counts.
args <- commandArgs(trailingOnly = TRUE)
man_dir <- args[[1]]
out_dir <- args[[2]]
# Name and version given: Rd2HTML then needs no installed package.
package <- c("hybridnet", read.dcf(file.path(man_dir, "..", "DESCRIPTION"), "Version")[[1]])
dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)

report <- function(file) {
  function(w) {
    message(sprintf("%s: %s", basename(file), conditionMessage(w)))
    invokeRestart("muffleWarning")
  }
}

rows <- character()
for (file in sort(list.files(man_dir, pattern = "[.]Rd$", full.names = TRUE))) {
  name <- sub("[.]Rd$", "", basename(file))
  withCallingHandlers({
    rd <- tools::parse_Rd(file)
    tags <- vapply(rd, function(x) attr(x, "Rd_tag"), "")
    keywords <- unlist(lapply(rd[tags == "\\keyword"], as.character))
    title <- paste(trimws(unlist(lapply(rd[tags == "\\title"], as.character))), collapse = " ")
    # The file, not the parsed `rd`: a parsed page with a versioned package also gets redirect
    # files for an installed library's help/ folder, which a static site has not.
    tools::Rd2HTML(file, out = file.path(out_dir, paste0(name, ".html")), package = package,
                   no_links = TRUE, stylesheet = "../style.css")
  }, warning = report(file))
  if (!("internal" %in% trimws(keywords))) {
    rows <- c(rows, sprintf('<tr><td><a href="%s.html">%s</a></td><td>%s</td></tr>', name, name,
                            title))
  }
}
writeLines(c("<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
             "<title>hybridnet R reference</title>",
             "<link rel=\"stylesheet\" href=\"../style.css\"></head><body><main>",
             "<p><a href=\"../index.html\">hybridnet documentation</a></p>",
             "<h1>R package hybridnet: reference</h1>", "<table>", rows, "</table>",
             "</main></body></html>"),
           file.path(out_dir, "index.html"))
