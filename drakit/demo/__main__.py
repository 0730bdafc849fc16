from drakit.demo import write

write()
