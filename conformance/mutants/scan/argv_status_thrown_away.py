"""main()'s status is thrown away, as the upstream did (D1): every end exits 0."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    'if __name__ == "__main__":\n'
    '    sys.exit(main())\n',
    'if __name__ == "__main__":\n'
    '    main()\n',
)]
KILLS = ["argv.statuses", "argv.usage"]
