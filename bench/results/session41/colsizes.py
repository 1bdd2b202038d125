import pyarrow.parquet as pq, glob, sys, collections
files = glob.glob(sys.argv[1] + '/**/*.parquet', recursive=True)
comp = collections.Counter(); unc = collections.Counter(); rgs = 0; rows = 0
for f in files:
    md = pq.ParquetFile(f).metadata
    rows += md.num_rows
    for i in range(md.num_row_groups):
        rg = md.row_group(i); rgs += 1
        for j in range(rg.num_columns):
            c = rg.column(j)
            comp[c.path_in_schema] += c.total_compressed_size
            unc[c.path_in_schema] += c.total_uncompressed_size
print(len(files), 'files', rgs, 'row groups', rows, 'rows', len(comp), 'leaves')
tc = sum(comp.values()); tu = sum(unc.values())
print('total compressed', tc, 'uncompressed', tu)
for k, v in sorted(comp.items(), key=lambda kv: -kv[1]):
    print(f"{k:60s} {v/rows:8.2f} {unc[k]/rows:8.2f} {unc[k]/max(v,1):6.2f}")
