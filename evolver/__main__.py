from evolver.commands.cli import main

raise SystemExit(main())
