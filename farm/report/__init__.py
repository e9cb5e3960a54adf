"""The day's picture: the report page (``farm report``) and the postings export (``farm export``).

farm.report.queries holds the SQL of every figure, farm.report.figures reads
them in one snapshot, farm.report.charts draws them (matplotlib) and
farm.report.page lays them out as one self-contained HTML file;
farm.report.export streams a day's postings to CSV, JSON lines or Parquet.
farm.report.build writes the page. The commands import these modules when they run, and only
the report imports matplotlib.
"""
